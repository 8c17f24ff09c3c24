# Trap: in `0 < x[i] < z[i]` Python reads `z[i]` only where `0 < x[i]`: `z` may be shorter than
# `x`, and the batched `(0 < x) & (x < z)` reads every element of `z` and raises.
import torch


def pick(x: torch.Tensor, z: torch.Tensor) -> torch.Tensor:
    out = torch.zeros(len(x))
    for i in range(len(x)):
        if 0 < x[i] < z[i]:
            out[i] = 1.0
        else:
            out[i] = 2.0
    return out
