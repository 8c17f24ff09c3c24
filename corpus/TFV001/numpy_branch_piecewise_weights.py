# Per-score weights from an if/elif/else chain in a NumPy loop: one nested np.where over every score.
# bench: piecewise_weights(scores=np_float64[n])
import numpy as np


def piecewise_weights(scores):
    scores = np.asarray(scores, dtype=np.float64).reshape(-1)
    weights = np.zeros(len(scores))
    for i in range(len(scores)):
        if scores[i] > 0.5:
            w = scores[i] * 2.0
        elif scores[i] > 0.0:
            w = scores[i] + 0.25
        else:
            w = 1.0 - scores[i]
        weights[i] = w
    return weights
