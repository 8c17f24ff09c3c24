# A running minimum from the front, written with the arguments the other way round.
import numpy as np


def running_floor(levels: np.ndarray) -> np.ndarray:
    for t in range(1, len(levels)):
        levels[t] = np.minimum(levels[t - 1], levels[t])
    return levels
