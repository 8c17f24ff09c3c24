# 2-D parts: every (k, 4) block of boxes becomes a (k, 4) block of its image's index, in the
# boxes' dtype (the result has the shape the boxes concatenated have).
import torch


def image_index_of_boxes(boxes_per_image):
    index = torch.cat([torch.full_like(boxes, image) for image, boxes in enumerate(boxes_per_image)])
    return index[:, 0]
