# Fill a kernel from Python math of both loop indices: the indices are numbers, the device is the weight's.
import math

import torch


def bilinear_kernel(w: torch.Tensor) -> torch.Tensor:
    out_channels, in_channels, height, width = w.shape
    f = math.ceil(height / 2)
    c = (2 * f - 1 - f % 2) / (2.0 * f)
    for i in range(height):
        for j in range(width):
            w[0, 0, i, j] = (1 - math.fabs(i / f - c)) * (1 - math.fabs(j / f - c))
    return w
