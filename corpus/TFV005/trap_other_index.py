# Trap: the branch writes the next element, not element i: not an element-wise map.
import torch


def spread(x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
    for i in range(len(x) - 1):
        if x[i] > 0:
            y[i + 1] = x[i]
    return y
