# A per-row value stored at a per-row position: on repeated positions the last row's value wins,
# and a batched `maps[classes] = scores` leaves which one wins unspecified. Untouched.
import torch


def per_class(maps: torch.Tensor, classes, scores):
    classes = classes.reshape(-1)
    for i, c in enumerate(classes):
        maps[c] = scores[i]
    return maps
