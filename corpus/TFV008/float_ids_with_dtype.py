# The fills are made float32 whatever the parts are: the ids come out float32, cast once.
import torch


def float_ids(parts):
    ids = torch.cat([torch.full_like(p, i, dtype=torch.float32) for i, p in enumerate(parts)])
    return ids
