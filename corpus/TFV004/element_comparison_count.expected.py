# Counting elements that pass a test: bool .item() summed into an int.
# bench: count_positive(x=float32[n])
import torch


def count_positive(x: torch.Tensor) -> int:
    positives = (x > 0).sum().item()
    return positives
