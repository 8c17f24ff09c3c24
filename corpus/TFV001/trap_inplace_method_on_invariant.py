# Trap: `total.add_(x[i])` adds every row into `total` in place, one after another. An invariant receiver
# called with per-sample operands is lifted only for element-wise methods that return a new value:
# `total.add_(x)` would broadcast the whole batch into one row instead of summing it. It must stay.
import torch


def running_total(x: torch.Tensor):
    x = x.reshape(x.size(0), -1)
    total = torch.zeros(x.size(1))
    rows = []
    for i in range(x.size(0)):
        rows.append(total.add_(x[i]).clone())
    return torch.stack(rows)
