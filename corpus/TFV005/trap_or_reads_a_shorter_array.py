# Trap: `or` asks `z[i]` only where `x[i] > 0` fails. Positions narrowed by `and` do not model
# that, and a batched `(x > 0) | (z > 0)` reads all of `z`, which may be shorter than `x`.
import torch


def flag(x: torch.Tensor, z: torch.Tensor) -> torch.Tensor:
    x = x.view(-1)
    z = z.view(-1)
    out = torch.zeros(len(x))
    for i in range(len(x)):
        if x[i] > 0 or z[i] > 0:
            out[i] = 1.0
    return out
