# Hand-written optimum for leaky_where.py: F.leaky_relu (x > 0 ? x : a * x, NaN included) copied into y.
import torch
import torch.nn.functional as F


def leaky(x: torch.Tensor, y: torch.Tensor, a: float) -> torch.Tensor:
    return y.copy_(F.leaky_relu(x, a))
