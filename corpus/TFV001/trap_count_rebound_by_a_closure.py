# Trap: `bump` rebinds the count `m` through `nonlocal`: `z` was made with the old `m` rows, the
# loop counts the new `m`, and `z` is read only where `x[i] != 7.5`.
import torch


def pick(x: torch.Tensor, m: int) -> torch.Tensor:
    def bump():
        nonlocal m
        m = len(x)

    x = x.view(-1).float()
    z = torch.ones(m)
    bump()
    out = torch.zeros(m)
    for i in range(m):
        if x[i] != 7.5 and z[i] > 0:
            out[i] = 1.0
    return out
