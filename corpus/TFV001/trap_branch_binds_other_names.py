# Must stay: the branches bind different names, so after the loop `low` or `high` keeps the value of whichever sample last took its branch.
import numpy as np


def split_last(scores):
    scores = np.asarray(scores, dtype=np.float64).reshape(-1)
    low = high = 0.0
    out = np.zeros(len(scores))
    for i in range(len(scores)):
        if scores[i] < 0:
            low = scores[i]
        else:
            high = scores[i]
        out[i] = high - low
    return out
