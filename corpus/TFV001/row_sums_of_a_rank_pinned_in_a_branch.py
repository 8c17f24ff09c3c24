# One sum per row, where the only line pinning the rank of `x` runs on one path: `h, w = x.shape`
# holds for a 2-D `x` and only when `verbose` is true. A 3-D `x` with `verbose` false reaches
# the loop as well, so the rank-2 form `x.sum(1)` (which sums a 3-D `x` over one axis, not whole
# rows) is not what is emitted: each row is summed over its flattened elements, for every rank.
# bench: row_sums(x=float32[n,64], verbose=bool)
import torch


def row_sums(x, verbose):
    if verbose:
        h, w = x.shape
        print(f"{h} rows of {w}")
    return torch.stack([x[i].sum() for i in range(len(x))])
