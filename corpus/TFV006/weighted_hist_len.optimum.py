# Hand-written optimum for weighted_hist_len.py: index_add_ of the float64 weights into zeros (adds in index order, as the loop does).
import torch


def weighted_histogram(bins: torch.Tensor, w: torch.Tensor) -> torch.Tensor:
    return torch.zeros(20, dtype=torch.float64).index_add_(0, bins, w)
