# Counting elements above a threshold: a Python int stays a Python int.
# bench: count_above(x=float32[n], t=float)
import torch


def count_above(x: torch.Tensor, t: float) -> int:
    count = 0
    count += int((x > t).sum())
    return count
