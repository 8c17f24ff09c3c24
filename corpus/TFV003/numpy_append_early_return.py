# numpy: the start is returned early when there is nothing to parse, then grown with np.append
# one (1, 4) row per record; the early `return` leaves the start as it was for the loop.
# bench: boxes_of(records=np_float32[n,4])
import numpy as np


def boxes_of(records):
    boxes = np.zeros((0, 4))
    if len(records) == 0:
        return boxes
    for rec in records:
        boxes = np.append(boxes, rec[None, :], axis=0)
    return boxes
