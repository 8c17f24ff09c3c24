# Hand-written optimum for zero_negatives_inplace.py: one in-place clamp (NaN stays NaN, as it fails `< 0`).
import torch


def zero_negatives(x: torch.Tensor) -> torch.Tensor:
    return x.clamp_(min=0)
