# Trap for TFV001: an in-place prefix sum; row i reads row i - 1 written by the previous step, so it is no batch (TFV007 turns it into the scan it is: x.cumsum(0)).
import torch


def prefix(x: torch.Tensor) -> torch.Tensor:
    for i in range(1, x.shape[0]):
        x[i] = x[i] + x[i - 1]
    return x
