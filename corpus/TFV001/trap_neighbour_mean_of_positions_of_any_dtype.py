# Must not change: the same query expansion, but the positions are a parameter. Nothing shows
# they are integers: a bool row selects the rows where it is True, and the batched
# feats[order[:n, :k], :] of a bool matrix selects elements of another shape.
import numpy as np


def expand(dist, order, k):
    feats = np.exp(-dist).astype(np.float32)
    expanded = np.zeros_like(feats)
    for i in range(feats.shape[0]):
        expanded[i, :] = np.mean(feats[order[i, :k], :], axis=0)
    return expanded
