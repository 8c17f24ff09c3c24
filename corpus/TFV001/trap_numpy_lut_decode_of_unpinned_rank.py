# Must stay: numpy_lut_decode_rows without the line that pins the table's rank. NumPy stores a
# (1, 1) table row into a (1,) row of `out` (it drops leading ones in an assignment), so the loop
# runs on a (k, 1, 1) table, where `out[:n] = lut[labels[:n]]` is an (n, 1, 1) block that does
# not fit an (n, 1) slice and raises. The checker meets such a table only among the trailing-one
# shapes it admits deliberately (a random draw needs several sizes of one at once).
import numpy as np


def decode(lut: np.ndarray, scores: np.ndarray) -> np.ndarray:
    n, _ = scores.shape
    labels = np.argmax(scores, axis=1)
    out = np.zeros((n, lut.shape[1]))
    for i in range(n):
        out[i] = lut[labels[i]]
    return out
