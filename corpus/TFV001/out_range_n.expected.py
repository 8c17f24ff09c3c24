# Loop over the first n rows only (range(0, n)); the rest of the output stays zero.
# bench: head_scale(x=float32[n,8], n=int)
import torch


def head_scale(x: torch.Tensor, n: int) -> torch.Tensor:
    out = torch.zeros(x.shape[0], x.shape[1])
    out[:max(n, 0)] = x[:max(n, 0)] * 2.0 + 1.0
    return out
