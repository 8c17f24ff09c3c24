# Trap: the test counts recalls strictly above the level while the maximum takes those at it too:
# at a level a recall equals exactly, the loop takes that precision where a strict mask would not.
import numpy as np


def mixed(recall, precision):
    score = 0.0
    for level in np.linspace(0, 1, 11):
        if np.sum(recall > level) == 0:
            best = 0
        else:
            best = np.max(precision[recall >= level])
        score += best / 11
    return score
