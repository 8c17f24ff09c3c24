# Trapezoid average precision over the ranks of the hits: an if/else on each rank picks the previous precision, one np.where and one sum.
# bench: trapezoid_precision(hits=np_bool[n])
import numpy as np


def trapezoid_precision(hits):
    ranks = np.flatnonzero(np.asarray(hits))
    count = len(ranks)
    ap = 0.0
    if count > 0:
        precision = (np.arange(count) + 1).astype(np.result_type(ranks, 0.0)) / (ranks + 1)
        previous = np.where(ranks != 0, np.arange(count).astype(np.result_type(ranks, 0.0)) / np.where(ranks != 0, ranks, np.ones_like(ranks)), 1.0)
        ap = ap + ((previous + precision) / 2).sum(0)
    return ap
