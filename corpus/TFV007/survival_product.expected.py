# A running product (survival probabilities) of a NumPy array, written as x = x * prev.
import numpy as np


def survival(keep: np.ndarray) -> np.ndarray:
    keep[:] = np.cumprod(keep, axis=0)
    return keep
