# torch imported under another name; torch.maximum spelled out.
# bench: high_water(level=float32[n])
import torch as th


def high_water(level: th.Tensor) -> th.Tensor:
    for i in range(1, len(level)):
        level[i] = th.maximum(level[i], level[i - 1])
    return level
