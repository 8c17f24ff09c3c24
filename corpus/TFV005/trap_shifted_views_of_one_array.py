# Trap: `dst` and `src` are views of one array, one element apart. Each step reads `src[i]`, which
# is `y[i]`, the element the step before wrote through `dst[i - 1]`: a carried dependence. The
# checker draws the two as independent tensors, where the batched form reads them all first.
import torch


def propagate(y: torch.Tensor, keep: torch.Tensor) -> torch.Tensor:
    y = y.view(-1)
    keep = keep.view(-1)
    dst = y[1:]
    src = y[:-1]
    for i in range(len(src)):
        if keep[i] > 0:
            dst[i] = src[i] * 2
        else:
            dst[i] = src[i]
    return y
