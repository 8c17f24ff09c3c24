# Trap: the sums go into an integer array, whose element `+=` truncates what each threshold adds
# -- one sum over the thresholds truncates once, and comes out larger.
import numpy as np


def per_class_counts(recalls, precisions):
    out = np.zeros(len(recalls), dtype=np.int64)
    for c in range(len(recalls)):
        for r in np.arange(0.0, 1.1, 0.1):
            if np.sum(recalls[c] >= r) == 0:
                q = 0
            else:
                q = np.max(precisions[c][recalls[c] >= r])
            out[c] += q / 10
    return out
