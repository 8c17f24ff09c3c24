# Trap: each level's best score is doubled in its own integer dtype, which wraps round for a uint8
# score past 127 -- the swept maximum is a float array (its fill is -inf), which would not wrap.
import numpy as np


def doubled(recall: np.ndarray, scores: np.ndarray) -> float:
    total = 0.0
    for level in np.linspace(0, 1, 11):
        if np.sum(recall >= level) == 0:
            best = 0
        else:
            best = np.max(scores[recall >= level])
        total += best * 2
    return total
