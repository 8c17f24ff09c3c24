# Hand-written optimum for confusion_matrix.py: one bincount over truth * 4 + pred, viewed as 4 x 4.
import torch


def confusion(truth: torch.Tensor, pred: torch.Tensor) -> torch.Tensor:
    return torch.bincount(truth * 4 + pred, minlength=16).view(4, 4)
