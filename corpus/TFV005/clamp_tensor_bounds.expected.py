# Clamping to per-element bounds read from tensors: one mask assignment per branch of the elif chain.
# bench: box(x=float32[n], lo=float32[n], hi=float32[n], y=float32[n])
import torch


def box(x: torch.Tensor, lo: torch.Tensor, hi: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
    y_mask1 = x[:len(y)] > hi[:len(y)]
    y_mask2 = ~y_mask1 & (x[:len(y)] < lo[:len(y)])
    y_mask3 = ~(y_mask1 | y_mask2)
    y[y_mask1] = hi[:len(y)][y_mask1].to(y.dtype)
    y[y_mask2] = lo[:len(y)][y_mask2].to(y.dtype)
    y[y_mask3] = x[:len(y)][y_mask3].to(y.dtype)
    return y
