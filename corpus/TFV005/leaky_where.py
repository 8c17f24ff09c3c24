# Leaky ReLU written element by element into a preallocated output.
# bench: leaky(x=float32[n], y=float32[n], a=float)
import torch


def leaky(x: torch.Tensor, y: torch.Tensor, a: float) -> torch.Tensor:
    x = x.flatten()
    y = y.view(-1)
    for i in range(len(x)):
        if x[i] > 0:
            y[i] = x[i]
        else:
            y[i] = a * x[i]
    return y
