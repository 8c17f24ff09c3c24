# bench: sinusoids(steps=int[n], channels=int[16])
# One store of Python math per (step, channel): no tensor is read, so the batch is made on the
# device of the table it fills.
import math

import torch


def sinusoids(steps, channels):
    out = torch.empty(steps, channels, dtype=torch.float64)
    out[:, :channels] = torch.sin(torch.arange(steps, device=out.device, dtype=torch.float64)[:, None] / (torch.arange(channels, device=out.device, dtype=torch.float64) + 1.0))
    return out
