# Trap: a running maximum reads the element the previous step wrote (y[i - 1]): a recurrence.
import torch


def running_floor(y: torch.Tensor) -> torch.Tensor:
    for i in range(1, len(y)):
        if y[i] < y[i - 1]:
            y[i] = y[i - 1]
    return y
