# NumPy one-hot targets over enumerate(labels): one advanced-index assignment.
# bench: one_hot(labels=np_int64[n]<10>)
import numpy as np


def one_hot(labels: np.ndarray) -> np.ndarray:
    labels = labels.ravel()
    out = np.zeros((len(labels), 10), dtype=np.float32)
    out[np.arange(len(labels)), labels] = 1.0
    return out
