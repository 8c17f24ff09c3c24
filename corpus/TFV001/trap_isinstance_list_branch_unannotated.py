# Trap: `x` is a list or a tuple in the branch that holds the loop -- the code says so. The
# tensor branch above indexes it along two dimensions, which says nothing about this branch:
# batching `x[i][t:t + n]` as `x[:, t:t + n]` would raise on the list.
import torch


def window(x, t: int, n: int):
    if isinstance(x, torch.Tensor):
        out = x[:, t:t + n]
    elif isinstance(x, (list, tuple)):
        out = [None] * len(x)
        for i in range(len(x)):
            out[i] = x[i][t:t + n]
    return out
