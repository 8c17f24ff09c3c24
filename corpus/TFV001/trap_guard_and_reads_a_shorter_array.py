# Trap: `z[i] < 0` is asked only where the row of `x` sums above zero (`and` stops at a false
# left side), so `z` may be shorter than `x`: the loop runs, and the batched mask
# `(x.sum(1) > 0) & (z < 0)` reads every row of `z` and raises. Nothing shows `z` is as long.
import torch


def rows(x: torch.Tensor, z: torch.Tensor, out: torch.Tensor) -> torch.Tensor:
    n, d = x.shape
    for i in range(n):
        if x[i].sum() > 0 and z[i] < 0:
            out[i] = x[i] * 2
    return out
