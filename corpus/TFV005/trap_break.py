# Trap: the loop stops at the first negative element; a vectorized form would touch them all.
import torch


def zero_until_negative(x: torch.Tensor) -> torch.Tensor:
    for i in range(len(x)):
        if x[i] < 0:
            break
        x[i] = 0
    return x
