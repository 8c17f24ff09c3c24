# Trap: the extent n is not the array's length: the rest of the array is left alone by the loop.
import torch


def prefix(x: torch.Tensor, n: int) -> torch.Tensor:
    for i in range(1, n):
        x[i] += x[i - 1]
    return x
