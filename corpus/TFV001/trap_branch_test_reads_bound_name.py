# Must stay: the second branch test reads `w`, which the first line of each branch binds; asked again after that line, the test would pick another branch.
import numpy as np


def chained_weights(scores):
    scores = np.asarray(scores, dtype=np.float64).reshape(-1)
    w = 0.0
    weights = np.zeros(len(scores))
    for i in range(len(scores)):
        if scores[i] > w:
            w = scores[i]
            weights[i] = w
        else:
            w = -scores[i]
            weights[i] = w
    return weights
