# Trap: the comprehension yields tensors (rows), not Python numbers.
import torch


def doubled_rows(x: torch.Tensor) -> list:
    return [row * 2 for row in x]
