# Trap: `peak` is one element seen `len(x)` times (`expand`): every step compares with, and
# writes, that one element, so the loop keeps a running maximum. A view of a new array may
# still overlap itself.
import torch


def running_peak(x: torch.Tensor):
    x = x.view(-1)
    peak = torch.full((1,), float("-inf")).expand(x.size(0))
    for i in range(x.size(0)):
        if x[i] > peak[i]:
            peak[i] = x[i]
    return peak[0]
