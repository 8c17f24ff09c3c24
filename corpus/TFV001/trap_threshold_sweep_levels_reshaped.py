# Trap: the levels are made a column before the sweep, so each step compares with a one-element
# row, whose mask gains an axis -- the levels are not the flat range the sweep would read.
import numpy as np


def column_levels(recall, precision):
    levels = np.linspace(0.0, 1.0, 11)
    levels.shape = (11, 1)
    total = 0.0
    for level in levels:
        if np.sum(recall >= level) == 0:
            best = 0
        else:
            best = np.max(precision[recall >= level])
        total += best / 11
    return total
