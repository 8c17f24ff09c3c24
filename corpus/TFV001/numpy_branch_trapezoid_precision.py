# Trapezoid average precision over the ranks of the hits: an if/else on each rank picks the previous precision, one np.where and one sum.
# bench: trapezoid_precision(hits=np_bool[n])
import numpy as np


def trapezoid_precision(hits):
    ranks = np.flatnonzero(np.asarray(hits))
    count = len(ranks)
    ap = 0.0
    for k in range(count):
        precision = (k + 1) / (ranks[k] + 1)
        if ranks[k] != 0:
            previous = k / ranks[k]
        else:
            previous = 1.0
        ap = ap + (previous + precision) / 2
    return ap
