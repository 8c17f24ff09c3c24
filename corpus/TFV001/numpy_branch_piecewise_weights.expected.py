# Per-score weights from an if/elif/else chain in a NumPy loop: one nested np.where over every score.
# bench: piecewise_weights(scores=np_float64[n])
import numpy as np


def piecewise_weights(scores):
    scores = np.asarray(scores, dtype=np.float64).reshape(-1)
    weights = np.zeros(len(scores))
    w = np.where(scores > 0.5, scores * 2.0, np.where(scores > 0.0, scores + 0.25, 1.0 - scores))
    weights[:len(scores)] = w
    return weights
