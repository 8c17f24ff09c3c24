# Trap: `shrink` resizes `z` in place through its closure: no line between the allocation and
# the loop mentions `z`, and still `z` has two rows, read only where `x[i] != 7.5`.
import torch


def pick(x: torch.Tensor, n: int) -> torch.Tensor:
    def shrink():
        z.resize_(2)

    x = x.view(-1).float()
    z = torch.ones(n)
    shrink()
    out = torch.zeros(n)
    for i in range(n):
        if x[i] != 7.5 and z[i] > 0:
            out[i] = 1.0
    return out
