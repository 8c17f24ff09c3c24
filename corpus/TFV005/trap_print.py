# Trap: a branch logs each clipped element; batching would drop the messages.
import torch


def clip_loudly(x: torch.Tensor) -> torch.Tensor:
    for i in range(len(x)):
        if x[i] > 1:
            print("clipping", i)
        else:
            x[i] = x[i] * 2
    return x
