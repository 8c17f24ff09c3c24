# Trap: a numpy array iterates and has .item() like a tensor, but x.sum(dtype=torch.float64) fails.
import numpy as np


def total(values):
    x = np.asarray(values)
    total = 0.0
    for i in range(x.shape[0]):
        total += x[i].item()
    return total
