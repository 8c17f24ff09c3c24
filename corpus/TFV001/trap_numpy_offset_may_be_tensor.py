# Trap: the same NumPy loop, but nothing says what `center` is: a torch tensor works in the loop
# (numpy scalar minus tensor is a tensor), while np.abs(values - center) on the whole array
# raises for it. The checker refutes the batched form on that kind; the loop stays.
import numpy as np


def abs_deviation(samples, center):
    values = np.asarray(samples, dtype=np.float64)
    deviation = np.zeros_like(values)
    for k in range(len(values)):
        deviation[k] = np.abs(values[k] - center) * 0.5
    return deviation
