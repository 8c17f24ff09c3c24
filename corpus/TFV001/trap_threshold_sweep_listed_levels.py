# Trap: the levels are Python floats, which NumPy compares in a float32 array's own precision --
# one float64 array of them compares in float64, and 0.7 rounds the other way there.
import numpy as np


def at_levels(recall, precision):
    score = 0.0
    for level in [0.3, 0.5, 0.7]:
        if np.sum(recall >= level) == 0:
            best = 0
        else:
            best = np.max(precision[recall >= level])
        score += best / 3
    return score
