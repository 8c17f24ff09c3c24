# A caller may pass one array as both `idx` and `hist`: the loop then reads positions it has already written, where np.add.at reads them all first.
import numpy as np


def tally(idx: np.ndarray, hist: np.ndarray, w: int) -> np.ndarray:
    for j in idx.ravel():
        hist[j] += w
    return hist
