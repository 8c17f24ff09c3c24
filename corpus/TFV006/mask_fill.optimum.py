# Hand-written optimum for mask_fill.py: index_fill_ of True, no index_put_ machinery.
import torch


def seen_mask(idx: torch.Tensor) -> torch.Tensor:
    return torch.zeros(32, dtype=torch.bool).index_fill_(0, idx, True)
