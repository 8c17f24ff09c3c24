# Segment ids spelled through names imported from torch, with the dimension given positionally.
from torch import cat, full_like
import torch


def image_ids(boxes_per_image):
    ids_parts = [boxes for boxes in boxes_per_image]
    ids = torch.cat(ids_parts)
    ids = torch.arange(len(ids_parts), device=ids.device).repeat_interleave(
        torch.tensor([len(part) for part in ids_parts], device=ids.device), output_size=len(ids),
    ).view(-1, *[1] * (ids.dim() - 1)).expand_as(ids).to(ids.dtype, copy=True)
    return ids
