# Loop over the first n rows only (range(0, n)); the rest of the output stays zero. `rows, cols =
# x.shape` pins `x` to a matrix: a (rows, 1, 1) `x` would store each (1, 1) row into a (1,) row of
# `out`, which torch allows for one row and not for a batch of them (the checker draws it).
# bench: head_scale(x=float32[n,8], n=int)
import torch


def head_scale(x: torch.Tensor, n: int) -> torch.Tensor:
    rows, cols = x.shape
    out = torch.zeros(rows, cols)
    for i in range(0, n):
        out[i] = x[i] * 2.0 + 1.0
    return out
