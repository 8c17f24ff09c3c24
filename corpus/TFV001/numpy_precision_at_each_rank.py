# Precision at each rank of a ranked hit list, as retrieval metrics compute it. `found` comes out
# of cumsum, so it is 1-D whatever `hits` is: the kernel replays the lines before the loop, which
# pins that. Dividing by the Python float `k + 1.0` keeps a float32 `found` float32 (NumPy's weak
# Python scalars), and an empty list makes a float64 array: the batched form says both.
import numpy as np


def precision_at_each_rank(ranked: np.ndarray, keep: np.ndarray) -> np.ndarray:
    hits = ranked[keep]
    found = hits.cumsum()
    precision = [count / (k + 1.0) for k, count in enumerate(found)]
    return np.asarray(precision) * hits
