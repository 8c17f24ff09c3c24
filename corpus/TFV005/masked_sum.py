# Conditional accumulation into a tensor accumulator: a masked reduction, not (v * keep).sum().
# bench: kept_total(v=float32[n], keep=bool[n])
import torch


def kept_total(v: torch.Tensor, keep: torch.Tensor) -> torch.Tensor:
    v = v.view(-1)
    keep = keep.view(-1)
    total = torch.zeros(())
    for i in range(len(v)):
        if keep[i]:
            total += v[i]
    return total
