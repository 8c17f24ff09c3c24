# range(0, n) spelling with an in-place mask: the write must stay inside the first n elements.
# `x` may have fewer than n elements (the loop writes only where `keep` is false): the mask form
# `x[:n][mask] = 0.0` raises there, filling at the selected positions does not.
# bench: clear_head(x=float32[n], keep=bool[n], n=int[n])
import torch


def clear_head(x: torch.Tensor, keep: torch.Tensor, n: int) -> torch.Tensor:
    keep = keep.view(-1)
    x_mask = ~keep[:max(n, 0)].bool()
    x.index_fill_(0, x_mask.nonzero().squeeze(1), 0.0)
    return x
