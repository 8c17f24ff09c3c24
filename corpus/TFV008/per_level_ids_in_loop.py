# Inside a loop over feature levels: each level's anchors get the index of their image.
import torch


def image_index_per_level(anchors_per_level):
    found = []
    for level in anchors_per_level:
        ids = torch.cat([torch.full_like(a, n) for n, a in enumerate(level)])
        found.append(ids)
    return found
