# `isinstance(s, float)` holds on entering the branch, but the branch binds `s` again, to a tensor:
# the test says nothing of the `s` the loop reads.
import torch


def scaled_row_sums(x, s, w, log):
    if isinstance(s, float):
        s = w.abs().max()
        log(s)
        return torch.stack([x[i].sum() * s for i in range(len(x))])
    return x
