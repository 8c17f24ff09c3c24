# Per-channel normalisation along the third axis of an image whose rank nothing pins. For an
# HWC image the channels could batch as `means[:, None, None]` against the channels moved first,
# but for an NHWC batch of images (4-D) `out[:, :, i]` is an (N, H, W) block and that form lines
# the means up with the wrong axis -- different numbers, no error: the checker draws the image
# one rank past the three the subscripts need and refutes it. What is emitted moves the channels
# last instead, where one number per channel broadcasts whatever the image's rank.
# bench: preprocess(img=np_float32[n,16,3])
import numpy as np


def preprocess(img):
    means = [0.485, 0.456, 0.406]
    stds = [0.229, 0.224, 0.225]
    out = img.copy()[:, :, ::-1]
    for i in range(3):
        out[:, :, i] = out[:, :, i] - means[i]
        out[:, :, i] = out[:, :, i] / stds[i]
    return out
