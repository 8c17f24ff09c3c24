# Trap: the float array is made an integer one after the first class, so later classes add into
# integer elements, which truncate each level's `+=` on its own.
import numpy as np


def per_class_then_rounded(recalls, precisions):
    out = np.zeros(len(recalls))
    for c in range(len(recalls)):
        for r in np.arange(0.0, 1.0, 0.25):
            if np.sum(recalls[c] > r) == 0:
                q = 0.0
            else:
                q = np.amax(precisions[c][recalls[c] > r])
            out[c] += q * 0.25
        out = out.astype(np.int64)
    return out
