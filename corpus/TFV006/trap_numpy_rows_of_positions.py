# A NumPy histogram whose index array nothing pins to one dimension: a row of positions per step is written once each, where np.add.at would count a repeat twice.
import numpy as np


def visits(idx: np.ndarray) -> np.ndarray:
    hist = np.zeros(8)
    for j in idx:
        hist[j] += 1
    return hist
