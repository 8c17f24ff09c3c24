# Hand-written optimum for nan_replace.py: one in-place nan_to_num_ that keeps the infinities.
import torch


def fill_nan(x: torch.Tensor) -> torch.Tensor:
    return x.nan_to_num_(nan=0.0, posinf=float("inf"), neginf=float("-inf"))
