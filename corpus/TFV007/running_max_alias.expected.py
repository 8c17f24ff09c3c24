# torch imported under another name; torch.maximum spelled out.
# bench: high_water(level=float32[n])
import torch as th


def high_water(level: th.Tensor) -> th.Tensor:
    level[:] = level.cummax(0).values
    return level
