# Per-channel normalisation of an HWC image along its last axis, with the statistics as literal
# lists: each list becomes an array of Python's float64 numbers, cast to the image's dtype as a
# Python float beside it is (NumPy treats it as weak), and the channels are done at once.
import numpy as np


def preprocess(img):
    means = [0.485, 0.456, 0.406]
    stds = [0.229, 0.224, 0.225]
    out = img.copy()[:, :, ::-1]
    out[:, :, :3] = np.moveaxis(np.moveaxis(out[:, :, :3], 2, 0) - np.asarray(means, dtype=np.float64)[:3][:, None, None].astype(np.result_type(out, 0.0)), 0, 2)
    out[:, :, :3] = np.moveaxis(np.moveaxis(out[:, :, :3], 2, 0) / np.asarray(stds, dtype=np.float64)[:3][:, None, None].astype(np.result_type(out, 0.0)), 0, 2)
    return out
