# Fill a kernel from Python math of both loop indices: the indices are numbers, the device is the weight's.
import math

import torch


def bilinear_kernel(w: torch.Tensor) -> torch.Tensor:
    out_channels, in_channels, height, width = w.shape
    f = math.ceil(height / 2)
    c = (2 * f - 1 - f % 2) / (2.0 * f)
    w[0, 0, :height, :width] = (1 - torch.abs(torch.arange(height, device=w.device, dtype=torch.float64) / f - c))[:, None] * (1 - torch.abs(torch.arange(width, device=w.device, dtype=torch.float64) / f - c))
    return w
