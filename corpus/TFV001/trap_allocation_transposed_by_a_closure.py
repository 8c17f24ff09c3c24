# Trap: `flip` transposes `z` in place through its closure (same rank, other rows): `z` has two
# rows when the loop runs, and is read only where `x[i] != 7.5`.
import torch


def pick(x: torch.Tensor, n: int) -> torch.Tensor:
    def flip():
        z.t_()

    x = x.view(-1).float()
    z = torch.ones(n, 2)
    flip()
    out = torch.zeros(n)
    for i in range(n):
        if x[i] != 7.5 and z[i, 0] > 0:
            out[i] = 1.0
    return out
