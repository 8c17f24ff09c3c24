# Zeroing negative entries in place: the loop reads and writes only element i.
# bench: zero_negatives(x=float32[n])
import torch


def zero_negatives(x: torch.Tensor) -> torch.Tensor:
    for i in range(x.shape[0]):
        if x[i] < 0:
            x[i] = 0
    return x
