# Trap: `np.ones_like(x, shape=2)` has two elements whatever `x` is: `z[i]` is read only where
# `x[i] != 7.5`, and nothing shows `z` is as long as the loop.
import numpy as np


def pick(x: np.ndarray) -> np.ndarray:
    x = x.reshape(-1)
    z = np.ones_like(x, shape=2)
    out = np.zeros(len(x))
    for i in range(len(x)):
        out[i] = z[i] if x[i] != 7.5 else 0.0
    return out
