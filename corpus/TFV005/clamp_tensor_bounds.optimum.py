# Hand-written optimum for clamp_tensor_bounds.py: two nested torch.where into y (not clamp: the hi test wins where lo > hi).
import torch


def box(x: torch.Tensor, lo: torch.Tensor, hi: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
    return torch.where(x > hi, hi, torch.where(x < lo, lo, x), out=y)
