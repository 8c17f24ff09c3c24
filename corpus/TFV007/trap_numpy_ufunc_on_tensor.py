# Trap: np.maximum applied to a tensor: a NumPy scan would leave the tensor's device and graph.
import numpy as np
import torch


def envelope(p: torch.Tensor) -> torch.Tensor:
    for i in range(len(p) - 1, 0, -1):
        p[i - 1] = np.maximum(p[i - 1], p[i])
    return p
