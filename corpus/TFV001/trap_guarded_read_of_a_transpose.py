# Trap: `x.T[i, 0]` is read only where `w[i] != 7.5`: the rows of `x.T` are `x`'s columns, which
# nothing shows are as many as the loop runs.
import torch


def pick(x: torch.Tensor, w: torch.Tensor) -> torch.Tensor:
    x = x.view(2, -1).float()
    w = w.view(-1).float()
    n = len(w)
    out = torch.zeros(n)
    for i in range(n):
        if w[i] != 7.5:
            out[i] = x.T[i, 0]
    return out
