# Trap: `z[i - 1]` read at every step shows `z` has one row fewer than the loop runs, not as many:
# `z[i]` is read only where `x[i] != 7.5`, and a batched read of it needs one row more.
import torch


def pick(x: torch.Tensor, z: torch.Tensor) -> torch.Tensor:
    x = x.view(-1).float()
    z = z.view(-1).float()
    return torch.stack([z[i - 1] + (z[i] if x[i] != 7.5 else x[i]) for i in range(1, len(x))])
