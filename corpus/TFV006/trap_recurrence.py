# Running maximum: each step reads what the previous step wrote, so it is a recurrence, not a scatter.
import torch


def running_max(x: torch.Tensor) -> torch.Tensor:
    for i in range(1, len(x)):
        x[i] = max(x[i], x[i - 1])
    return x
