# A 1-D signal grown from torch.tensor([]) one chunk at a time.
# bench: upsample(x=float32[n])
import torch


def upsample(x):
    signal = torch.tensor([])
    for v in x:
        signal = torch.cat([signal, v.repeat(3)])
    return signal
