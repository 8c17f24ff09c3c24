# Hand-written optimum for out_abs_diff_mean.py: one batched reduction over dim 1, returned as it is (no buffer, no vmap).
import torch


def l1_per_sample(pred: torch.Tensor, target: torch.Tensor) -> torch.Tensor:
    return (pred - target).abs().mean(dim=1)
