# Trap: empty parts are filtered out, but keep their position: the ids skip numbers, which an
# `arange` over the kept parts would not.
import torch


def kept_ids(parts):
    ids = torch.cat([torch.full_like(p, i) for i, p in enumerate(parts) if len(p) > 0])
    return ids
