# The precision envelope of an average-precision metric: a running maximum taken from the end.
import numpy as np


def average_precision(recall, precision):
    r = np.concatenate(([0.0], recall, [1.0]))
    p = np.concatenate(([0.0], precision, [0.0]))
    p[:] = np.maximum.accumulate(p[::-1])[::-1]
    # the index name is reused: the value the loop leaves in it is never read
    k = np.where(r[1:] != r[:-1])[0]
    return np.sum((r[k + 1] - r[k]) * p[k + 1])
