# Extent spelled x.numel(): the same loop, one more spelling.
# bench: flat_total(x=float32[n])
import torch


def flat_total(x: torch.Tensor):
    t = x.sum(dtype=torch.float64).item()
    return t
