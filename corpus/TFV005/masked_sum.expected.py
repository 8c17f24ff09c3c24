# Conditional accumulation into a tensor accumulator: a masked reduction, not (v * keep).sum().
# bench: kept_total(v=float32[n], keep=bool[n])
import torch


def kept_total(v: torch.Tensor, keep: torch.Tensor) -> torch.Tensor:
    v = v.view(-1)
    keep = keep.view(-1)
    total = torch.zeros(())
    total += v[keep[:len(v)].bool()].to(torch.promote_types(v.dtype, total.dtype)).sum()
    return total
