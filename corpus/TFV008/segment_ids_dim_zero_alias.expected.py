# Segment ids of a list of feature blocks, spelled with an alias and `dim=0`: every row of part
# `k` gets `k` (in the blocks' own dtype, over all their columns).
import torch as th


def segment_ids(blocks):
    ids_parts = [block for block in blocks]
    ids = th.cat(ids_parts)
    ids = th.arange(len(ids_parts), device=ids.device).repeat_interleave(
        th.tensor([len(part) for part in ids_parts], device=ids.device), output_size=len(ids),
    ).view(-1, *[1] * (ids.dim() - 1)).expand_as(ids).to(ids.dtype, copy=True)
    return ids
