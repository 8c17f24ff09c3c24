# A 1-D Gaussian window built from Python numbers, one `math.exp` per tap (the SSIM-loss spelling).
from math import exp

import torch


def gaussian(window_size, sigma):
    gauss = torch.exp(-(torch.arange(max(window_size, 0), dtype=torch.float64) - window_size // 2) ** 2 / float(2 * sigma ** 2)).to(torch.get_default_dtype())
    return gauss / gauss.sum()
