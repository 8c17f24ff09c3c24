# any() over element comparisons becomes one reduction.
# bench: has_negative(x=float32[n])
import torch


def has_negative(x: torch.Tensor) -> bool:
    return any(v < 0 for v in x)
