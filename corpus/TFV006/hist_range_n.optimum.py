# Hand-written optimum for hist_range_n.py: torch.bincount of the first n labels, as float32 counts.
import torch


def head_histogram(labels: torch.Tensor, n: int) -> torch.Tensor:
    return torch.bincount(labels[:max(n, 0)], minlength=10).float()
