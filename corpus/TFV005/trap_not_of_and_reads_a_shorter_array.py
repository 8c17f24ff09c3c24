# Trap: `z[i] < 0` sits on the right of an `and` under `not`: Python asks it only where
# `x[i] > 0`, so `z` may be shorter than `x`, and a batched `z < 0` reads all of it and raises.
import torch


def pick(x: torch.Tensor, z: torch.Tensor) -> torch.Tensor:
    out = torch.zeros(len(x))
    for i in range(len(x)):
        if not (x[i] > 0 and z[i] < 0):
            out[i] = 1.0
        else:
            out[i] = 2.0
    return out
