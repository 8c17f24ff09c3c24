# Trap: a helper may change the list between its literal and the loop (`normalise(stds)`): the
# literal's numbers are not what the loop reads, so nothing is taken from them.
import torch


def normalise(values):
    values[0] = 2.0


def scale(x: torch.Tensor) -> torch.Tensor:
    stds = [1.0, 1.0, 1.0]
    normalise(stds)
    n, d = x.shape
    out = torch.empty_like(x)
    for i in range(n):
        out[i] = x[i] / stds[i]
    return out
