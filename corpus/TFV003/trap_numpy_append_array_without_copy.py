# Trap: `np.array(buf, copy=False)` hands back `buf` itself, not a new array each step; filled
# in place, every collected piece would be the last step's.
import numpy as np


def stamped(items, buf):
    out = np.zeros((0, 3))
    for item in items:
        piece = np.array(buf, copy=False)
        piece[0, 0] = item
        out = np.append(out, piece, axis=0)
    return out
