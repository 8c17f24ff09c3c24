# Hand-written optimum for hist_len.py: torch.bincount (labels in [0, k), as the bench draws them).
import torch


def class_histogram(labels: torch.Tensor, k: int) -> torch.Tensor:
    return torch.bincount(labels, minlength=k)
