# Trap: the first `z[i]` is read only where `flag` holds, for every sample or for none: it shows
# nothing about `z`'s length, and the second is read only where `x[i] != 7.5`. `z` may be shorter.
import torch


def pick(x: torch.Tensor, z: torch.Tensor, flag: bool) -> torch.Tensor:
    x = x.view(-1).float()
    z = z.view(-1).float()
    return torch.stack([(z[i] if flag else x[i]) + (z[i] if x[i] != 7.5 else x[i]) for i in range(len(x))])
