# Zeroing NaN entries in place through an element-wise predicate method.
# bench: fill_nan(x=float32[n])
import torch


def fill_nan(x: torch.Tensor) -> torch.Tensor:
    for i in range(len(x)):
        if x[i].isnan():
            x[i] = 0.0
    return x
