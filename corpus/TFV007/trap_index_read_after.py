# Trap: the loop index is returned after the loop, so the loop's last value of it is observable.
import numpy as np


def envelope(p: np.ndarray):
    for i in range(p.size - 1, 0, -1):
        p[i - 1] = np.maximum(p[i - 1], p[i])
    return p, i
