# Zeroing negative entries in place: the loop reads and writes only element i.
# bench: zero_negatives(x=float32[n])
import torch


def zero_negatives(x: torch.Tensor) -> torch.Tensor:
    x[x < 0] = 0
    return x
