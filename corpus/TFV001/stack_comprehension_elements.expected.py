# torch.stack over a comprehension that iterates the rows directly: per-row mean-centering.
# bench: center_rows(x=float32[n,32])
import torch


def center_rows(x: torch.Tensor) -> torch.Tensor:
    n, d = x.shape
    return x - x.mean(1, keepdim=True)
