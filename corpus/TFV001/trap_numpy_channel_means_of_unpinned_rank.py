# Must stay: per-channel normalisation along the third axis of an image whose rank nothing pins.
# For an HWC image the channels batch as `means[:, None, None]` against the channels moved first;
# for an NHWC batch of images (4-D), `out[:, :, i]` is a (N, H, C) block, and that form lines the
# means up with the wrong axis -- different numbers, no error. The checker draws the image one
# rank past the three the subscripts need, and refutes it.
import numpy as np


def preprocess(img):
    means = [0.485, 0.456, 0.406]
    stds = [0.229, 0.224, 0.225]
    out = img.copy()[:, :, ::-1]
    for i in range(3):
        out[:, :, i] = out[:, :, i] - means[i]
        out[:, :, i] = out[:, :, i] / stds[i]
    return out
