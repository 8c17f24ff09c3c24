# range(0, n) spelling with an in-place mask: the write must stay inside the first n elements.
# bench: clear_head(x=float32[n], keep=bool[n], n=int[n])
import torch


def clear_head(x: torch.Tensor, keep: torch.Tensor, n: int) -> torch.Tensor:
    x_mask = ~keep[:max(n, 0)].bool()
    x[:max(n, 0)][x_mask] = 0.0
    return x
