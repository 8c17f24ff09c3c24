# Trap: `cat` is this module's own helper (it returns a lone part as it is), not torch's: what it
# does with the fills is not torch.cat's.
import torch
from torch import full_like


def cat(tensors, dim=0):
    if len(tensors) == 1:
        return tensors[0]
    return torch.cat(tensors, dim)


def ids_of(parts):
    ids = cat([full_like(p, i) for i, p in enumerate(parts)])
    return ids
