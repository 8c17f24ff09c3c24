# Trap: `z` was made with `n` rows, then resized in place to two: it is read only where
# `x[i] != 7.5`, and a batched read of `n` rows raises.
import torch


def pick(x: torch.Tensor, n: int) -> torch.Tensor:
    z = torch.ones(n)
    z.resize_(2)
    out = torch.zeros(n)
    for i in range(n):
        if x[i] != 7.5 and z[i] > 0:
            out[i] = 1.0
    return out
