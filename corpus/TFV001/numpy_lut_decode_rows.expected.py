# numpy: a look-up-table decode, one row per sample at its `np.argmax` class, into a
# preallocated array (`n, _ = scores.shape` pins the scores to rows, `_, d = lut.shape` the
# table): `out[:] = lut[labels]`.
# bench: decode(lut=np_float64[10,3], scores=np_float32[n,10])
import numpy as np


def decode(lut: np.ndarray, scores: np.ndarray) -> np.ndarray:
    n, _ = scores.shape
    labels = np.argmax(scores, axis=1)
    _, d = lut.shape
    out = np.zeros((n, d))
    out[:n] = lut[labels[:n]]
    return out
