# numpy: one (1, 5) row per kept box, built fresh each step, filled in place, then grown with
# np.append(..., axis=0); a `continue` guard skips boxes with no width or height.
# bench: parse_annotations(boxes=np_float64[n,4], labels=np_int64[n]<80>)
import numpy as np


def parse_annotations(boxes, labels):
    annotations = np.zeros((0, 5))
    annotations_parts = []
    for idx, box in enumerate(boxes):
        if box[2] <= box[0] or box[3] <= box[1]:
            continue
        annotation = np.zeros((1, 5))
        annotation[0, :4] = box
        annotation[0, 4] = labels[idx]
        annotations_parts.append(annotation)
    annotations = np.concatenate([annotations, *annotations_parts], axis=0)
    return annotations
