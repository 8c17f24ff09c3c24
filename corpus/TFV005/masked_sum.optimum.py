# Hand-written optimum for masked_sum.py: a torch.where-masked sum (inf and NaN outside the mask never reach it).
import torch


def kept_total(v: torch.Tensor, keep: torch.Tensor) -> torch.Tensor:
    return torch.where(keep, v, 0.0).sum()
