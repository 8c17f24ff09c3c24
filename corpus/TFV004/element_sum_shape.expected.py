# Extent spelled x.shape[0]; the accumulator has a comment above the loop.
# bench: mean_value(x=float32[n])
import torch


def mean_value(x):
    # add every element
    acc = x.sum(dtype=torch.float64).item()
    return acc / max(x.numel(), 1)
