# `-=` accumulation: the total is the negated sum.
# bench: debt(x=float32[n])
import torch


def debt(x: torch.Tensor) -> float:
    balance = -x.sum(dtype=torch.float64).item()
    return balance
