# One loop fills two lists, each stacked on its own line after the loop: both become one batched
# expression. Nothing pins the rank of `x`, so the reductions run over each flattened sample.
# bench: spread(x=float32[n,64], scale=0.5)
import torch


def spread(x, scale: float):
    centres = x[..., None].flatten(1).mean(1) * scale
    peaks = x[..., None].flatten(1).amax(1) - x[..., None].flatten(1).amin(1)
    return centres, peaks
