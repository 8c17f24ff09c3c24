# `-=` accumulation: the total is the negated sum.
# bench: debt(x=float32[n])
import torch


def debt(x: torch.Tensor) -> float:
    balance = 0.0
    for i in range(len(x)):
        balance -= x[i].item()
    return balance
