# np.array of .item() values (float64 array for float tensors).
# bench: to_numpy(x=float32[n])
import numpy as np
import torch


def to_numpy(x: torch.Tensor):
    return np.array([v.item() for v in x])
