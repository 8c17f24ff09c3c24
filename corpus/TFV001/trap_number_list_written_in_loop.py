# Trap: the loop writes the list it reads (`weights[i]` depends on `weights[i - 1]` as the loop
# left it): read as one array of the literal's numbers, every row would get the original values.
import torch


def decayed(x: torch.Tensor) -> torch.Tensor:
    weights = [1.0, 1.0, 1.0, 1.0]
    n, d = x.shape
    out = torch.zeros_like(x)
    for i in range(1, n):
        weights[i] = weights[i - 1] * 0.5
        out[i] = x[i] * weights[i]
    return out
