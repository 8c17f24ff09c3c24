# The lowest cost among the detections scored at or above each threshold, summed over thresholds.
# bench: lowest_costs(scores=np_float32[n], costs=np_float32[n])
import numpy as np


def lowest_costs(scores, costs):
    scores, costs = np.asarray(scores), np.asarray(costs)
    total = 0.
    thresholds = np.linspace(0.1, 0.9, 9)
    reached = thresholds.reshape((-1,) + (1,) * np.ndim(scores)) <= scores
    if reached.any():
        selects = reached.reshape(reached.shape + (1,) * (np.ndim(costs) - np.ndim(scores)))
        cost = np.where(selects, costs, np.inf).reshape(reached.shape[0], -1).min(1)
        cost[~reached.reshape(reached.shape[0], -1).any(1)] = 0
        total = total + cost.sum()
    return total
