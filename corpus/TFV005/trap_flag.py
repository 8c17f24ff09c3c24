# Trap: the condition is a loop-invariant Python flag, not an element value.
import torch


def maybe_copy(x: torch.Tensor, y: torch.Tensor, flag: bool) -> torch.Tensor:
    for i in range(len(x)):
        if flag:
            y[i] = x[i]
        else:
            y[i] = 0
    return y
