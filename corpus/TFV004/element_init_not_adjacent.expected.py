# The initial value is set earlier; another statement sits between it and the loop.
# bench: weighted(x=float32[n])
import torch


def weighted(x: torch.Tensor):
    total = 0.0
    scale = 2.0
    total += x.sum(dtype=torch.float64).item()
    return total * scale
