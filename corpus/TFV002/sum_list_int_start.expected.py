# sum() with Python's int start over a list of .item() values: an empty float tensor sums to int 0,
# so the rewrite keeps Python's sum over one .tolist().
# bench: total(x=float32[n])
import torch


def total(x: torch.Tensor):
    return sum(x.flatten().tolist())
