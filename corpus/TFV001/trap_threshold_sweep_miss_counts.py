# Trap: a level no recall reaches counts as a full point, not as zero, so the levels that reach
# nothing add to the score too.
import numpy as np


def optimistic(recall, precision):
    score = 0.0
    for level in np.linspace(0, 1, 11):
        if np.sum(recall >= level) == 0:
            best = 1.0
        else:
            best = np.max(precision[recall >= level])
        score += best / 11
    return score
