# Must stay: the module defines `area` twice, and the second definition (which reads a global)
# is the one the loop calls. A name bound more than once in the module is no pure helper.
import torch

SCALE = 2.0


def area(box):
    return (box[2] - box[0]) * (box[3] - box[1])


def area(box):  # noqa: F811
    return SCALE * (box[2] - box[0]) * (box[3] - box[1])


def areas(boxes: torch.Tensor):
    n, _ = boxes.shape
    return torch.stack([area(boxes[i]) for i in range(n)])
