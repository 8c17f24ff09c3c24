# Trap: `z` was made with the old `n`; the loop counts the new one (`len(x)`): `z` may be shorter,
# and it is read only where `x[i] != 7.5`.
import torch


def pick(x: torch.Tensor, n: int) -> torch.Tensor:
    z = torch.ones(n)
    n = len(x)
    out = torch.zeros(n)
    for i in range(n):
        if x[i] != 7.5 and z[i] > 0:
            out[i] = 1.0
    return out
