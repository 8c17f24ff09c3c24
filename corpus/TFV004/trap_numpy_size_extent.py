# Trap: an ndarray's `.size` is an int attribute, not the tensor method `.size()`: nothing here is a tensor, and `x.sum(dtype=torch.float64)` fails on an ndarray.
import numpy as np
import torch


def total(values):
    x = np.asarray(values, dtype=np.float64)
    s = 0.0
    for i in range(x.size):
        s += float(x[i])
    return s
