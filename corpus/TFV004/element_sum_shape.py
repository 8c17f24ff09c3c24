# Extent spelled x.shape[0]; the accumulator has a comment above the loop.
# bench: mean_value(x=float32[n])
import torch


def mean_value(x):
    acc = 0.0
    # add every element
    for k in range(x.shape[0]):
        acc += x[k].item()
    return acc / max(x.numel(), 1)
