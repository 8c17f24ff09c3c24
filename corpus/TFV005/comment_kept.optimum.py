# Hand-written optimum for comment_kept.py: one in-place clamp (NaN stays NaN, as it fails `< 0.0`).
import torch


def positive_part(x: torch.Tensor) -> torch.Tensor:
    return x.clamp_(min=0.0)
