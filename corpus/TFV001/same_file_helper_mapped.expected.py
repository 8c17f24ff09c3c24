# A pure helper the module defines, called once per anchor in a list comprehension that is then
# stacked: `torch.vmap` maps the helper itself over the anchors, and the verification kernel holds
# the helper's definition, so the checker runs the real function (the code keeps calling it).
# bench: best_anchor(anchors=float32[n,2], gwh=float32[16,2])
import torch


def wh_iou(box1, box2):
    # IoU of one (w, h) pair against n pairs, all boxes anchored at the same corner
    box2 = box2.t()
    w1, h1 = box1[0], box1[1]
    w2, h2 = box2[0], box2[1]
    inter_area = torch.min(w1, w2) * torch.min(h1, h2)
    union_area = (w1 * h1 + 1e-16) + w2 * h2 - inter_area
    return inter_area / union_area


def best_anchor(anchors: torch.Tensor, gwh: torch.Tensor):
    na, _ = anchors.shape
    return torch.vmap(lambda anchorsk: wh_iou(anchorsk, gwh))(anchors).clone().max(0)
