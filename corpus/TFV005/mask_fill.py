# Masking: a bare element condition tests truthiness, so an integer 0/1 mask must become bool.
# bench: drop(x=float32[n], mask=bool[n])
import torch


def drop(x: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
    mask = mask.view(-1)
    for i in range(len(x)):
        if mask[i]:
            x[i] = 0
    return x
