# An in-place prefix sum of a tensor.
# bench: prefix(x=float32[n])
import torch


def prefix(x: torch.Tensor) -> torch.Tensor:
    x[:] = x.cumsum(0)
    return x
