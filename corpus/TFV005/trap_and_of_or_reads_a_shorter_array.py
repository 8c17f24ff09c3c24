# Trap: the right side of `and` is itself an `or`. Python asks `w[i]` only where `x[i] > 0` and
# `z[i] <= 0`: narrowing the positions by the whole `z[i] > 0 or w[i] > 0` at once reads `w` at
# positions the loop never reads it, and `w` may be shorter than `x` there.
import torch


def flag(x: torch.Tensor, z: torch.Tensor, w: torch.Tensor) -> torch.Tensor:
    x = x.view(-1)
    z = z.view(-1)
    w = w.view(-1)
    out = torch.zeros(len(x))
    for i in range(len(x)):
        if x[i] > 0 and (z[i] > 0 or w[i] > 0):
            out[i] = 1.0
    return out
