# Trap: the element expression prints every element; a vectorized form would drop the output.
import torch


def noisy_values(x: torch.Tensor) -> list:
    return [print(v) or v.item() for v in x]
