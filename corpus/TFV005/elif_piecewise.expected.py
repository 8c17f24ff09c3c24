# Piecewise function with an elif chain: one mask assignment per branch (nested torch.where would promote the branches together).
# bench: piecewise(x=float32[n], out=float32[n])
import torch


def piecewise(x: torch.Tensor, out: torch.Tensor) -> torch.Tensor:
    x = x.view(-1)
    out = out.view(-1)
    out_mask1 = x < -1
    out_mask2 = ~out_mask1 & (x < 1)
    out_mask3 = ~(out_mask1 | out_mask2)
    out_value2 = x * x
    out_value3 = 2 * x - 1
    out[:x.shape[0]][out_mask1] = (-1 - x * 0.5)[out_mask1].to(out.dtype)
    out[:x.shape[0]][out_mask2] = out_value2[out_mask2].to(out.dtype)
    out[:x.shape[0]][out_mask3] = out_value3[out_mask3].to(out.dtype)
    return out
