# A float sum started at 0.0 over a generator of .item() values.
# bench: total(x=float32[n])
import torch


def total(x: torch.Tensor) -> float:
    return x.sum(dtype=torch.float64).item()
