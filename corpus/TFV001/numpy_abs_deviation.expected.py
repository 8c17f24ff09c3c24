# A NumPy loop: the array is built by np.asarray, so the batched form is spelled with numpy.
import numpy as np


def abs_deviation(samples, center: float):
    values = np.asarray(samples, dtype=np.float64)
    deviation = np.zeros_like(values)
    deviation[:len(values)] = np.abs(values - center) * 0.5
    return deviation
