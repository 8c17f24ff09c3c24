# Trap: the last threshold's precision is returned beside the sum, so the loop's `best` is read
# after it -- one comparison against every threshold would leave a whole array there.
import numpy as np


def eleven_point_and_last(recall, precision):
    score = 0.0
    for level in np.linspace(0, 1, 11):
        if np.sum(recall >= level) == 0:
            best = 0
        else:
            best = np.max(precision[recall >= level])
        score += best / 11
    return score, best
