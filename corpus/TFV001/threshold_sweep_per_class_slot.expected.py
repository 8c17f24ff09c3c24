# Per-class precision at four recall levels, added into one float array a class at a time.
# bench: per_class(recalls=np_float32[8,n], precisions=np_float32[8,n])
import numpy as np


def per_class(recalls: np.ndarray, precisions: np.ndarray) -> np.ndarray:
    out = np.zeros(len(recalls))
    for c in range(len(recalls)):
        # the levels are strict: a recall equal to one does not reach it
        thresholds = np.arange(0.0, 1.0, 0.25)
        reached = recalls[c] > thresholds.reshape((-1,) + (1,) * np.ndim(recalls[c]))
        if reached.any():
            selects = reached.reshape(reached.shape + (1,) * (np.ndim(precisions[c]) - np.ndim(recalls[c])))
            q = np.where(selects, precisions[c], -np.inf).reshape(reached.shape[0], -1).max(1)
            q[~reached.reshape(reached.shape[0], -1).any(1)] = 0
            out[c] += (q * 0.25).sum(dtype=out.dtype)
    return out
