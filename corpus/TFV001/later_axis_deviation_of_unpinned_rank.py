# The mean absolute deviation of each slice `x[:, j, :]`, with nothing pinning the rank of `x`.
# Written for a 3-D `x`, the batched form would reduce over (0, 2) and broadcast the means back as
# `[:, None, None]`; a 4-D `x` (which `x[:, j, :]` reads just as well) lines them up with the wrong
# axis, and the checker refutes it. What is emitted is right for every rank: the means reduce over
# every dimension but the walked one, broadcast with the walked dimension last, and each sample's
# deviation is averaged over its flattened elements.
# bench: slice_deviation(x=float32[8,n,16], n=int)
import torch


def slice_deviation(x, n: int):
    out = torch.zeros(n)
    for j in range(n):
        out[j] = (x[:, j, :] - x[:, j, :].mean()).abs().mean()
    return out
