# The lowest cost among the detections scored at or above each threshold, summed over thresholds.
# bench: lowest_costs(scores=np_float32[n], costs=np_float32[n])
import numpy as np


def lowest_costs(scores, costs):
    scores, costs = np.asarray(scores), np.asarray(costs)
    total = 0.
    for threshold in np.linspace(0.1, 0.9, 9):
        cost = np.min(costs[threshold <= scores]) if np.count_nonzero(threshold <= scores) > 0 else 0
        total = total + cost
    return total
