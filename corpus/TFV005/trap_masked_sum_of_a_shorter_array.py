# Trap: `w[i]` is added only where `x[i] > 0`, so `w` may be shorter than `x` (no positive
# element of `x` past its end): the loop sums, a masked sum of `w[:len(x)]` raises on the mask.
import torch


def positive_weight(x: torch.Tensor, w: torch.Tensor) -> torch.Tensor:
    total = torch.zeros(())
    for i in range(len(x)):
        if x[i] > 0:
            total += w[i]
    return total
