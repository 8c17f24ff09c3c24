# Trap: `x.float()[i]` is read only where `w[i] != 7.5`; `x` may have fewer rows than `w`, and
# nothing shows how many rows `x.float()` has.
import torch


def pick(x: torch.Tensor, w: torch.Tensor) -> torch.Tensor:
    x = x.view(-1).float()
    w = w.view(-1).float()
    n = len(w)
    out = torch.zeros(n)
    for i in range(n):
        if w[i] != 7.5:
            out[i] = x.float()[i]
    return out
