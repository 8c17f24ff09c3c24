# A 1-D Gaussian window built from Python numbers, one `math.exp` per tap (the SSIM-loss spelling).
# `window_size: int` says what `range` is given: unannotated, it may be a 0-d integer tensor,
# whose arithmetic differs (see trap_gaussian_window_count_of_unknown_kind). `torch.Tensor` ignores
# the default device (`torch.set_default_device`) and makes the default tensor type: so does
# `.to(torch.Tensor())`, where the `arange` follows the default device.
from math import exp

import torch


def gaussian(window_size: int, sigma):
    gauss = torch.exp(-(torch.arange(max(window_size, 0), dtype=torch.float64) - window_size // 2) ** 2 / float(2 * sigma ** 2)).to(torch.Tensor())
    return gauss / gauss.sum()
