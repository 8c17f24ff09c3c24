# Trap: the loop reads the grown array (its length decides when to stop).
import numpy as np


def first_k(values, k):
    picked = np.zeros((0,))
    for v in values:
        picked = np.append(picked, v)
        if len(picked) >= k:
            break
    return picked
