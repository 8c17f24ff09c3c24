# The loop runs over range(n): n may be smaller than the tensors, or negative.
# bench: threshold(x=float32[n], y=float32[n], n=int[n], t=float)
import torch


def threshold(x: torch.Tensor, y: torch.Tensor, n: int, t: float) -> torch.Tensor:
    x = x.view(-1)
    y = y.view(-1)
    y[:max(n, 0)] = torch.where(x[:max(n, 0)] >= t, 1.0, 0.0)
    return y
