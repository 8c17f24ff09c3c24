# Hand-written optimum for mask_fill.py: one in-place masked_fill_, no boolean-mask indexing.
import torch


def drop(x: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
    return x.masked_fill_(mask, 0)
