# Each channel's peak, normalised by its own range, for channels of any rank: NumPy reduces a
# sample over tuple(range(1, x.ndim)) axes, which also holds for one-number samples (no axis).
# bench: channel_peaks(acts=np_float32[n,16,16])
import numpy as np


def channel_peaks(acts):
    acts = np.asarray(acts, dtype=np.float32)
    shifted = np.abs(acts)
    shifted = shifted - shifted.min(axis=tuple(range(1, shifted.ndim)), keepdims=True)
    return np.float32(shifted.max(axis=tuple(range(1, shifted.ndim))) / (shifted.sum(axis=tuple(range(1, shifted.ndim))) + 1.0))
