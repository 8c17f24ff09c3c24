# Leaky ReLU written element by element into a preallocated output.
# bench: leaky(x=float32[n], y=float32[n], a=float)
import torch


def leaky(x: torch.Tensor, y: torch.Tensor, a: float) -> torch.Tensor:
    x = x.flatten()
    y = y.view(-1)
    y_mask = x > 0
    y_else = a * x
    y[:len(x)][y_mask] = x[y_mask].to(y.dtype)
    y[:len(x)][~y_mask] = y_else[~y_mask].to(y.dtype)
    return y
