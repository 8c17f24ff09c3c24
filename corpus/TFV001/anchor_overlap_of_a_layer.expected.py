# Overlap of every anchor with every target box through a small helper of the module; the anchors
# are an attribute of a layer object the function looks up (the checker gets them as an input).
import torch


def wh_overlap(anchor, sizes):
    sizes = sizes.t()
    inter = torch.min(anchor[0], sizes[0]) * torch.min(anchor[1], sizes[1])
    return inter / (anchor[0] * anchor[1] + 1e-16 + sizes[0] * sizes[1] - inter)


def best_anchor(model, targets):
    layer = model.heads[0]
    sizes = targets[:, 2:4] * layer.scale
    return torch.vmap(lambda anchor: wh_overlap(anchor, sizes))(layer.anchors).clone().max(0)
