# Feature maps weighted by one weight per channel, where nothing pins the weights' rank: a mean
# over two axes of an array of unknown rank may leave rows of weights as well as numbers.
import numpy as np


def weighted_maps(grads, maps):
    weights = np.mean(grads, axis=(1, 2))
    heat = np.zeros(maps.shape[1:], dtype=np.float32)
    heat += (np.expand_dims(weights, tuple(range(1, maps.ndim - weights.ndim + 1))) * np.expand_dims(maps[:len(weights)], tuple(range(1, weights.ndim - maps.ndim + 1)))).sum(0, dtype=heat.dtype)
    return heat
