# Trap: each class is counted in two tensors, which may live on different devices: the loop adds
# one number from each, a batch would compare both against one device's classes. Must stay.
import torch


def agreement(pred: torch.Tensor, target: torch.Tensor, num_classes: int) -> torch.Tensor:
    both = torch.zeros(num_classes)
    for c in range(num_classes):
        both[c] = (pred == c).sum() + (target == c).sum()
    return both
