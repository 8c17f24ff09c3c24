# Trap: `torch.split(x, 1)` looks like one-row chunks, but for an empty `x` it gives one empty
# chunk where `torch.chunk` raises: the loop appends one tensor of shape (0, d), and
# `unbind` of the empty batch appends none.
import torch


def rows(x: torch.Tensor) -> list:
    out = [x.sum(0)]
    for row in torch.split(x, 1):
        out.append(row.squeeze(0))
    return out
