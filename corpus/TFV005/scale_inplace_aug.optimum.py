# Hand-written optimum for scale_inplace_aug.py: one torch.where written back into x, no boolean-mask indexing.
import torch


def damp(x: torch.Tensor, mask: torch.Tensor, factor: float) -> torch.Tensor:
    return torch.where(mask, x * factor, x, out=x)
