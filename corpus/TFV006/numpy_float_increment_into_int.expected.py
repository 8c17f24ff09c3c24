# A float increment into an integer NumPy array: the loop truncates each sum as it stores it, and np.add.at casts each addition the same way (unbuffered).
import numpy as np


def scores(idx: np.ndarray) -> np.ndarray:
    idx = idx.ravel()
    total = np.zeros(4, dtype=np.int64)
    np.add.at(total, idx, 0.5)
    return total
