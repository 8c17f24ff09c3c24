# Trap: the comprehension reads `z[i]` only where `x[i] > 0`, so `z` may be shorter than `x`
# (nothing positive in `x` past its end): the comprehension runs, and a `torch.where` over the
# batch reads every element of `z` and raises. Nothing shows `z` is as long as `x`.
import torch


def pick(x: torch.Tensor, z: torch.Tensor) -> torch.Tensor:
    x = x.view(-1)
    return torch.stack([z[i] * 2 if x[i] > 0 else x[i] for i in range(len(x))])
