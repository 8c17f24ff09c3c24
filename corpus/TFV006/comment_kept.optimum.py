# Hand-written optimum for comment_kept.py: torch.bincount, as float32 counts (indices in [0, 9), as the bench draws them).
import torch


def tally(idx: torch.Tensor) -> torch.Tensor:
    return torch.bincount(idx, minlength=9).float()
