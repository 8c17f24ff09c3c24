# The image index column of RoI-format boxes: one (k, 1) column per image's (k, 4) boxes, filled
# with the image's position (torchvision's convert_boxes_to_roi_format, as a comprehension).
import torch


def roi_format(boxes):
    concat_boxes = torch.cat([b for b in boxes], dim=0)
    ids = torch.cat([torch.full_like(b[:, :1], i) for i, b in enumerate(boxes)], dim=0)
    return torch.cat([ids, concat_boxes], dim=1)
