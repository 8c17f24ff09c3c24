# Trap: the branch copies the previous element of the same tensor, so each step sees the last write.
import torch


def hold_last(x: torch.Tensor, valid: torch.Tensor) -> torch.Tensor:
    for i in range(len(x)):
        if not valid[i]:
            x[i] = x[i - 1]
    return x
