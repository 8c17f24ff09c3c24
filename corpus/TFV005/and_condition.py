# A compound condition with `and`: becomes `&` of element-wise comparisons.
# bench: band_pass(x=float32[n], y=float32[n], lo=float, hi=float)
import torch


def band_pass(x: torch.Tensor, y: torch.Tensor, lo: float, hi: float) -> torch.Tensor:
    x = x.view(-1)
    y = y.view(-1)
    for i in range(len(x)):
        if x[i] > lo and x[i] < hi:
            y[i] = x[i]
        else:
            y[i] = 0.0
    return y
