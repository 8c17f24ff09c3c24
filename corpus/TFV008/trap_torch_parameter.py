# Trap: the module calls `cat` and `full_like` by imported names and a parameter is called
# `torch`: new lines that spell `torch.cat` would reach the parameter, not the module.
from torch import cat, full_like


def segment_ids(parts, torch=None):
    ids = cat([full_like(p, i) for i, p in enumerate(parts)])
    return ids
