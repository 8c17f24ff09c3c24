# Eleven-point interpolated precision: the best precision at or past each recall level, averaged.
# bench: eleven_point(recall=np_float64[n], precision=np_float64[n])
import numpy as np


def eleven_point(recall: np.ndarray, precision: np.ndarray) -> float:
    score = 0.0
    for level in np.linspace(0, 1, 11):
        if not (recall >= level).any():
            best = 0
        else:
            best = precision[recall >= level].max()
        score += best / 11
    return score
