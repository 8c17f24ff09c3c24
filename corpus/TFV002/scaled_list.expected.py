# Arithmetic on each converted element.
# bench: percentages(probs=float32[n])
import torch


def percentages(probs: torch.Tensor) -> list:
    return (probs.flatten().double() * 100.0).tolist()
