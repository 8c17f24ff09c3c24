# any() over element comparisons becomes one reduction.
# bench: has_negative(x=float32[n])
import torch


def has_negative(x: torch.Tensor) -> bool:
    return (x < 0).any().item()
