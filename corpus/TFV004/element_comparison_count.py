# Counting elements that pass a test: bool .item() summed into an int.
# bench: count_positive(x=float32[n])
import torch


def count_positive(x: torch.Tensor) -> int:
    positives = 0
    for i in range(len(x)):
        positives += (x[i] > 0).item()
    return positives
