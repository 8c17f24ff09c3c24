# Hand-written optimum for scatter_add_src.py: index_add_ into zeros (adds in index order, as the loop does).
import torch


def segment_sums(idx: torch.Tensor, src: torch.Tensor, k: int) -> torch.Tensor:
    return torch.zeros(k).index_add_(0, idx, src)
