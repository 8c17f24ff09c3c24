# Trap: the named list is consumed twice on the next line (stacked and concatenated), so removing it would drop one consumer's input.
import torch


def both(x: torch.Tensor):
    rows = [x[i] * 2 for i in range(len(x))]
    out = torch.stack(rows) + torch.cat(rows).sum()
    return out
