# Counting elements above a threshold: a Python int stays a Python int.
# bench: count_above(x=float32[n], t=float)
import torch


def count_above(x: torch.Tensor, t: float) -> int:
    count = 0
    for i in range(x.numel()):
        if x[i] > t:
            count += 1
    return count
