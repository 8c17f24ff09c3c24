# Each channel's peak, normalised by its own range, for channels of any rank: NumPy reduces a
# sample over tuple(range(1, x.ndim)) axes, which also holds for one-number samples (no axis).
# bench: channel_peaks(acts=np_float32[n,16,16])
import numpy as np


def channel_peaks(acts):
    acts = np.asarray(acts, dtype=np.float32)
    peaks = []
    for channel in acts:
        shifted = np.abs(channel)
        shifted = shifted - shifted.min()
        peaks.append(shifted.max() / (shifted.sum() + 1.0))
    return np.float32(peaks)
