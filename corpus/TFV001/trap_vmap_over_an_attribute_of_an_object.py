# Trap: the anchors are an attribute of an object the function looks up, which may hold a list
# of tensors -- `torch.vmap` maps the tensors of a list as one pytree (their rows, not the list's
# items), so a vmap of the helper over it would give other rows without an error.
import torch


def wh_overlap(anchor, sizes):
    sizes = sizes.t()
    inter = torch.min(anchor[0], sizes[0]) * torch.min(anchor[1], sizes[1])
    return inter / (anchor[0] * anchor[1] + 1e-16 + sizes[0] * sizes[1] - inter)


def best_anchor(model, targets):
    layer = model.heads[0]
    sizes = targets[:, 2:4] * layer.scale
    overlaps = [wh_overlap(anchor, sizes) for anchor in layer.anchors]
    return torch.stack(overlaps, 0).max(0)
