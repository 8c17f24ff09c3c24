# Trap: a nested function reads the grown value while the loop runs.
import torch


def collect(batches, hook):
    out = torch.empty(0, 2)

    def size():
        return out.shape[0]

    for b in batches:
        out = torch.cat([out, b])
        hook(size)
    return out
