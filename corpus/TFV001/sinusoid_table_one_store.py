# bench: sinusoids(steps=int[n], channels=int[16])
# One store of Python math per (step, channel): no tensor is read, so the batch is made on the
# device of the table it fills.
import math

import torch


def sinusoids(steps, channels):
    out = torch.empty(steps, channels, dtype=torch.float64)
    for t in range(steps):
        for c in range(channels):
            out[t, c] = math.sin(t / (c + 1.0))
    return out
