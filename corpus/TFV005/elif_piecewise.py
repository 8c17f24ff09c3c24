# Piecewise function with an elif chain: one mask assignment per branch (nested torch.where would promote the branches together).
# bench: piecewise(x=float32[n], out=float32[n])
import torch


def piecewise(x: torch.Tensor, out: torch.Tensor) -> torch.Tensor:
    x = x.view(-1)
    out = out.view(-1)
    for i in range(x.shape[0]):
        if x[i] < -1:
            out[i] = -1 - x[i] * 0.5
        elif x[i] < 1:
            out[i] = x[i] * x[i]
        else:
            out[i] = 2 * x[i] - 1
    return out
