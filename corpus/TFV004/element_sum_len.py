# Sum of a 1-D tensor's elements through .item(), extent spelled len(x).
# bench: total(x=float32[n])
import torch


def total(x: torch.Tensor) -> float:
    total = 0.0
    for i in range(len(x)):
        total += x[i].item()
    return total
