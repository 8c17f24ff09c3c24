# Recall levels made once above the loop and swept by name: the best precision at each level.
# bench: mean_best(recall=np_float64[n], precision=np_float64[n])
import numpy as np


def mean_best(recall: np.ndarray, precision: np.ndarray) -> float:
    levels = np.linspace(0.0, 1.0, 21)
    total = 0.0
    reached = recall >= levels.reshape((-1,) + (1,) * np.ndim(recall))
    if reached.any():
        selects = reached.reshape(reached.shape + (1,) * (np.ndim(precision) - np.ndim(recall)))
        best = np.where(selects, precision, -np.inf).reshape(reached.shape[0], -1).max(1)
        best[~reached.reshape(reached.shape[0], -1).any(1)] = 0
        total += (best / 21).sum()
    return total
