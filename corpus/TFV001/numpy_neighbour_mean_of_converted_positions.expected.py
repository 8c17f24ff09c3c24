# Query expansion in NumPy: each row becomes the mean of its k nearest rows. The positions are an
# argsort cast with astype(np.int32): integers, so each row gathers (a bool row would select).
# bench: expand(dist=np_float32[n,n], k=int[3])
import numpy as np


def expand(dist, k):
    n, _ = dist.shape
    feats = np.exp(-dist).astype(np.float32)
    order = np.argsort(dist, axis=1).astype(np.int32)
    expanded = np.zeros_like(feats)
    if n > 0:
        expanded[:n, :] = np.mean(feats[order[:n, :k], :], axis=1)
    return expanded
