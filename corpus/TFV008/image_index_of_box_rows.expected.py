# 2-D parts: every (k, 4) block of boxes becomes a (k, 4) block of its image's index, in the
# boxes' dtype (the result has the shape the boxes concatenated have).
import torch


def image_index_of_boxes(boxes_per_image):
    index_parts = [boxes for boxes in boxes_per_image]
    index = torch.cat(index_parts)
    index = torch.arange(len(index_parts), device=index.device).repeat_interleave(
        torch.tensor([len(part) for part in index_parts], device=index.device), output_size=len(index),
    ).view(-1, *[1] * (index.dim() - 1)).expand_as(index).to(index.dtype, copy=True)
    return index[:, 0]
