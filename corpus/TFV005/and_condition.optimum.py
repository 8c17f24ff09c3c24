# Hand-written optimum for and_condition.py: one torch.where copied into y, no boolean-mask indexing.
import torch


def band_pass(x: torch.Tensor, y: torch.Tensor, lo: float, hi: float) -> torch.Tensor:
    return y.copy_(torch.where((x > lo) & (x < hi), x, 0.0))  # NaN fails both tests: 0, as before
