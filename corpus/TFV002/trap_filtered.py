# Trap (documented gap): a comprehension with an `if` filter is left alone.
import torch


def positives(x: torch.Tensor) -> list:
    return [v.item() for v in x if v > 0]
