# Inside a loop over feature levels: each level's anchors get the index of their image.
import torch


def image_index_per_level(anchors_per_level):
    found = []
    for level in anchors_per_level:
        ids_parts = [a for a in level]
        ids = torch.cat(ids_parts)
        ids = torch.arange(len(ids_parts), device=ids.device).repeat_interleave(
            torch.tensor([len(part) for part in ids_parts], device=ids.device), output_size=len(ids),
        ).view(-1, *[1] * (ids.dim() - 1)).expand_as(ids).to(ids.dtype, copy=True)
        found.append(ids)
    return found
