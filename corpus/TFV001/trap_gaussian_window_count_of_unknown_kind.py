# The SSIM Gaussian window with `window_size` unannotated: `range` takes a 0-d integer tensor as
# well as an int, and then `x - window_size // 2` is tensor arithmetic (a uint8 size wraps
# round below zero), which the batched float64 table does not reproduce. Annotated `int`, it is
# rewritten (gaussian_window_from_range).
from math import exp

import torch


def gaussian(window_size, sigma):
    gauss = torch.Tensor([exp(-(x - window_size // 2) ** 2 / float(2 * sigma ** 2)) for x in range(window_size)])
    return gauss / gauss.sum()
