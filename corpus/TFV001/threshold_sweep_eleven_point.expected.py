# Eleven-point interpolated precision: the best precision at or past each recall level, averaged.
# bench: eleven_point(recall=np_float64[n], precision=np_float64[n])
import numpy as np


def eleven_point(recall: np.ndarray, precision: np.ndarray) -> float:
    score = 0.0
    thresholds = np.linspace(0, 1, 11)
    reached = recall >= thresholds.reshape((-1,) + (1,) * np.ndim(recall))
    if reached.any():
        selects = reached.reshape(reached.shape + (1,) * (np.ndim(precision) - np.ndim(recall)))
        best = np.where(selects, precision, -np.inf).reshape(reached.shape[0], -1).max(1)
        best[~reached.reshape(reached.shape[0], -1).any(1)] = 0
        score += (best / 11).sum()
    return score
