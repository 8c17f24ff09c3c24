# np.fmax ignores NaN where np.maximum propagates it: its own accumulate keeps that.
import numpy as numpy


def peak_so_far(signal: numpy.ndarray) -> numpy.ndarray:
    for j in range(1, signal.shape[0]):
        signal[j] = numpy.fmax(signal[j], signal[j - 1])
    return signal
