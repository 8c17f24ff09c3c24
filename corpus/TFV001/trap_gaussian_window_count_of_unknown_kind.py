# A 1-D Gaussian window built from Python numbers, one `math.exp` per tap (the SSIM-loss spelling).
from math import exp

import torch


def gaussian(window_size, sigma):
    gauss = torch.Tensor([exp(-(x - window_size // 2) ** 2 / float(2 * sigma ** 2)) for x in range(window_size)])
    return gauss / gauss.sum()
