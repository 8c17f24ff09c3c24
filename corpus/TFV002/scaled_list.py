# Arithmetic on each converted element.
# bench: percentages(probs=float32[n])
import torch


def percentages(probs: torch.Tensor) -> list:
    return [p.item() * 100.0 for p in probs]
