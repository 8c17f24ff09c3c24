# A NumPy loop: the array is built by np.asarray, so the batched form is spelled with numpy.
import numpy as np


def abs_deviation(samples, center: float):
    values = np.asarray(samples, dtype=np.float64)
    deviation = np.zeros_like(values)
    for k in range(len(values)):
        deviation[k] = np.abs(values[k] - center) * 0.5
    return deviation
