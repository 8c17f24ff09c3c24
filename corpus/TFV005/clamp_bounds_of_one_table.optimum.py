# Hand-written optimum for clamp_bounds_of_one_table.py: two nested torch.where into y (not clamp: the hi test wins where lo > hi).
import torch


def box(x: torch.Tensor, bounds: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
    lo = bounds[:, 0]
    hi = bounds[:, 1]
    return torch.where(x > hi, hi, torch.where(x < lo, lo, x), out=y)
