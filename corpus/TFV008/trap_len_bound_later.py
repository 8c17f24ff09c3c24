# Trap: the function binds `len` itself further down, so `len` is a local name everywhere in it:
# the new lines' `len(...)` would be read before it is set (UnboundLocalError).
import torch


def segment_ids(parts):
    ids = torch.cat([torch.full_like(p, i) for i, p in enumerate(parts)])
    len = ids.numel()
    return ids, len
