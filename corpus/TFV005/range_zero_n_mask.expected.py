# range(0, n) spelling with an in-place mask: the write must stay inside the first n elements.
# bench: clear_head(x=float32[n], keep=bool[n], n=int[n])
import torch


def clear_head(x: torch.Tensor, keep: torch.Tensor, n: int) -> torch.Tensor:
    x_mask = ~keep[:max(n, 0)].bool()
    x.index_fill_(0, x_mask.nonzero().squeeze(1), 0.0)
    return x
