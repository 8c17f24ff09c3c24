# A compound condition with `and`: becomes `&` of element-wise comparisons.
# bench: band_pass(x=float32[n], y=float32[n], lo=float, hi=float)
import torch


def band_pass(x: torch.Tensor, y: torch.Tensor, lo: float, hi: float) -> torch.Tensor:
    x = x.view(-1)
    y = y.view(-1)
    y_mask = (x > lo) & (x < hi)
    y[:len(x)][y_mask] = x[y_mask].to(y.dtype)
    y[:len(x)][~y_mask] = 0.0
    return y
