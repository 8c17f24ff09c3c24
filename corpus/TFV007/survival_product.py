# A running product (survival probabilities) of a NumPy array, written as x = x * prev.
import numpy as np


def survival(keep: np.ndarray) -> np.ndarray:
    for i in range(1, keep.shape[0]):
        keep[i] = keep[i] * keep[i - 1]
    return keep
