# A 1-D signal grown from torch.tensor([]) one chunk at a time.
# bench: upsample(x=float32[n])
import torch


def upsample(x):
    signal = torch.tensor([])
    signal_parts = []
    for v in x:
        signal_parts.append(v.repeat(3))
    signal = torch.cat([signal, *signal_parts])
    return signal
