# The image index column of RoI-format boxes: one (k, 1) column per image's (k, 4) boxes, filled
# with the image's position (torchvision's convert_boxes_to_roi_format, as a comprehension).
import torch


def roi_format(boxes):
    concat_boxes = torch.cat([b for b in boxes], dim=0)
    ids_parts = [b[:, :1] for b in boxes]
    ids = torch.cat(ids_parts)
    ids = torch.arange(len(ids_parts), device=ids.device).repeat_interleave(
        torch.tensor([len(part) for part in ids_parts], device=ids.device), output_size=len(ids),
    ).view(-1, *[1] * (ids.dim() - 1)).expand_as(ids).to(ids.dtype, copy=True)
    return torch.cat([ids, concat_boxes], dim=1)
