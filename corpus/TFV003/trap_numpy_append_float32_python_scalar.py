# Trap: np.append ravels a Python float into a float64 array, so a float32 start becomes
# float64; one np.concatenate(..., axis=None) would treat the float as weak and stay float32.
import numpy as np


def thresholds(values):
    out = np.zeros(0, dtype=np.float32)
    for v in values:
        out = np.append(out, 0.5)
    return out
