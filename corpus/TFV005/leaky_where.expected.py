# Leaky ReLU written element by element into a preallocated output.
# bench: leaky(x=float32[n], y=float32[n], a=float)
import torch


def leaky(x: torch.Tensor, y: torch.Tensor, a: float) -> torch.Tensor:
    y[:len(x)] = torch.where(x > 0, x, a * x)
    return y
