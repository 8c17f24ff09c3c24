# Clamping to per-element bounds that are two columns of one table: `lo` has the rows `hi` has,
# and the first test reads `hi[i]` at every step, so `lo` is as long as the loop too.
# bench: box(x=float32[n], bounds=float32[n,2], y=float32[n])
# Rejected: `torch.where` promotes int32 bounds through float32 beside a float32 `x` (2**31 - 1
# becomes 2**31), and the per-branch form is refuted on a `lo` shorter than `hi`, which the
# kernel draws because it does not replay the two lines that cut both from one table.
import torch


def box(x: torch.Tensor, bounds: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
    x = x.flatten()
    y = y.flatten()
    bounds = bounds.view(-1, 2)
    lo = bounds[:, 0]
    hi = bounds[:, 1]
    for i in range(len(y)):
        if x[i] > hi[i]:
            y[i] = hi[i]
        elif x[i] < lo[i]:
            y[i] = lo[i]
        else:
            y[i] = x[i]
    return y
