# Per-class precision at four recall levels, added into one float array a class at a time.
# bench: per_class(recalls=np_float32[8,n], precisions=np_float32[8,n])
import numpy as np


def per_class(recalls: np.ndarray, precisions: np.ndarray) -> np.ndarray:
    out = np.zeros(len(recalls))
    for c in range(len(recalls)):
        # the levels are strict: a recall equal to one does not reach it
        for r in np.arange(0.0, 1.0, 0.25):
            if np.sum(recalls[c] > r) == 0:
                q = 0.0
            else:
                q = np.amax(precisions[c][recalls[c] > r])
            out[c] += q * 0.25
    return out
