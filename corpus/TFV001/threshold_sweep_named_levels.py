# Recall levels made once above the loop and swept by name: the best precision at each level.
# bench: mean_best(recall=np_float64[n], precision=np_float64[n])
import numpy as np


def mean_best(recall: np.ndarray, precision: np.ndarray) -> float:
    levels = np.linspace(0.0, 1.0, 21)
    total = 0.0
    for level in levels:
        if np.sum(recall >= level) == 0:
            best = 0
        else:
            best = np.max(precision[recall >= level])
        total += best / 21
    return total
