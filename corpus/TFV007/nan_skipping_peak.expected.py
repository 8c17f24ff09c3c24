# np.fmax ignores NaN where np.maximum propagates it: its own accumulate keeps that.
import numpy as numpy


def peak_so_far(signal: numpy.ndarray) -> numpy.ndarray:
    signal[:] = numpy.fmax.accumulate(signal)
    return signal
