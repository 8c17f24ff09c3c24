# Trap: the precision is drawn afresh at every level; one comparison against every level would
# draw it once and change what the random stream gives everything after the loop.
import numpy as np


def noisy(recall):
    score = 0.0
    for level in np.linspace(0, 1, 11):
        if np.sum(recall >= level) == 0:
            best = 0
        else:
            best = np.max(np.random.rand(len(recall))[recall >= level])
        score += best / 11
    return score
