# Trap: `z[i]` is read only where `x[i] <= 0`, so `z` may have fewer elements than `x` (with
# every element of `x` past its end positive): the loop runs, and a batched `z < 0` over the
# loop's range reads past its end and raises. Nothing shows `z` is as long as `x`.
import torch


def pick(x: torch.Tensor, z: torch.Tensor) -> torch.Tensor:
    out = torch.zeros(len(x))
    for i in range(len(x)):
        if x[i] > 0:
            out[i] = 1.0
        elif z[i] < 0:
            out[i] = 2.0
    return out
