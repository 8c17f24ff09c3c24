# Precision at each rank of a ranked hit list, as retrieval metrics compute it. `found` comes out
# of cumsum, so it is 1-D whatever `hits` is: the kernel replays the lines before the loop, which
# pins that. Dividing by the Python float `k + 1.0` keeps a float32 `found` float32 (NumPy's weak
# Python scalars), and an empty list makes a float64 array: the batched form says both.
import numpy as np


def precision_at_each_rank(ranked: np.ndarray, keep: np.ndarray) -> np.ndarray:
    hits = ranked[keep]
    found = hits.cumsum()
    return (np.asarray(found / (np.arange(len(found)) + 1.0).astype(np.result_type(found, 0.0))) if len(found) > 0 else np.asarray([])) * hits
