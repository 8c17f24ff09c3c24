# Trap: the generator's body runs at `next(g)`, after `z` is made, and transposes it in place: `z`
# has two rows when the loop runs, and is read only where `x[i] != 7.5`.
import torch


def pick(x: torch.Tensor, n: int) -> torch.Tensor:
    g = (z.t_() for _ in range(1))
    x = x.view(-1).float()
    z = torch.ones(n, 2)
    next(g)
    out = torch.zeros(n)
    for i in range(n):
        if x[i] != 7.5 and z[i, 0] > 0:
            out[i] = 1.0
    return out
