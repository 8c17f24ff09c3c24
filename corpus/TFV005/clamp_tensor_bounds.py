# Clamping to per-element bounds read from tensors: one mask assignment per branch of the elif chain.
# bench: box(x=float32[n], lo=float32[n], hi=float32[n], y=float32[n])
import torch


def box(x: torch.Tensor, lo: torch.Tensor, hi: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
    for i in range(len(y)):
        if x[i] > hi[i]:
            y[i] = hi[i]
        elif x[i] < lo[i]:
            y[i] = lo[i]
        else:
            y[i] = x[i]
    return y
