# Trap: the condition reads a Python list, not a tensor; labels[:n] > 0 would fail on a list.
import torch


def keep_positive(x: torch.Tensor, labels, y: torch.Tensor) -> torch.Tensor:
    for i in range(len(x)):
        if labels[i] > 0:
            y[i] = x[i]
        else:
            y[i] = 0
    return y
