# A running minimum from the front, written with the arguments the other way round.
import numpy as np


def running_floor(levels: np.ndarray) -> np.ndarray:
    levels[:] = np.minimum.accumulate(levels)
    return levels
