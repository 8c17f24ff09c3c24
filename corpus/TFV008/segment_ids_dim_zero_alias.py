# Segment ids of a list of feature blocks, spelled with an alias and `dim=0`: every row of part
# `k` gets `k` (in the blocks' own dtype, over all their columns).
import torch as th


def segment_ids(blocks):
    ids = th.cat([th.full_like(block, fill_value=k) for k, block in enumerate(blocks)], dim=0)
    return ids
