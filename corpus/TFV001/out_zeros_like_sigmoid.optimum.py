# Hand-written optimum for out_zeros_like_sigmoid.py: the gate applied to the whole batch at once, no buffer, no vmap.
import torch


def gated(x: torch.Tensor, g: torch.Tensor) -> torch.Tensor:
    return x * torch.sigmoid(g)
