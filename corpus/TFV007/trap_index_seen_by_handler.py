# Trap: the index is rebound after the loop, but an exception in between reaches a handler that reads it.
import numpy as np


def envelope(p: np.ndarray, scale):
    try:
        for i in range(p.size - 1, 0, -1):
            p[i - 1] = np.maximum(p[i - 1], p[i])
        p = p / scale
        i = 0
    except ZeroDivisionError:
        print("failed after step", i)
    return p
