# Trap: the loop fills a Python list by position. A batched store into the list would put rows
# of one batched tensor there; the list of per-sample slices stays as it is.
import torch


def time_slices(x: torch.Tensor, start: int, width: int) -> list:
    pieces = [None] * len(x)
    for k in range(len(x)):
        pieces[k] = x[k][start:start + width]
    return pieces
