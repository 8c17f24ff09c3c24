# Feature maps weighted by one weight per channel, where nothing pins the weights' rank: a mean
# over two axes of an array of unknown rank may leave rows of weights as well as numbers.
import numpy as np


def weighted_maps(grads, maps):
    weights = np.mean(grads, axis=(1, 2))
    heat = np.zeros(maps.shape[1:], dtype=np.float32)
    for k, w in enumerate(weights):
        heat += w * maps[k]
    return heat
