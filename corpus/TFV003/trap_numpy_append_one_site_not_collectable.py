# Trap: one branch grows `out` with a buffer that is changed in place each step, so that site
# cannot be collected; collecting only the other branch would put its pieces first.
import numpy as np


def interleave(values, buf):
    out = np.array([])
    for i, v in enumerate(values):
        if i % 2:
            buf[0] = v
            out = np.append(out, buf)
        else:
            out = np.append(out, v)
    return out
