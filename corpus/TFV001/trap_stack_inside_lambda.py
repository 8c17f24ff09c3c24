# Trap: the stack of the appended rows sits in a lambda called after `x` is zeroed; a batched `x * 2` there would read the zeroed `x`.
import torch


def doubled_later(x: torch.Tensor) -> torch.Tensor:
    items = []
    for i in range(x.shape[0]):
        items.append(x[i] * 2)
    stacked = lambda: torch.stack(items)
    x.zero_()
    return stacked()
