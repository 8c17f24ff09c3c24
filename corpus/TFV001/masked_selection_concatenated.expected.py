# Each row's entries below a limit, clamped at zero and concatenated: the mask is a comparison (bool) of
# the row's whole shape, so the selections, concatenated in order, are the batch's selection, row-major.
# bench: below_limit(cost=float32[n,16], limit=float[0.5])
import torch


def below_limit(cost, limit: float):
    n = cost.size(0)
    cost = cost.view(n, -1)
    keep = cost < limit
    row = cost
    row = row.clamp(min=0.0)
    return row[keep[:n]]
