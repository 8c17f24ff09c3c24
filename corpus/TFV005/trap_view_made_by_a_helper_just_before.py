# Trap: `shifted(1)` hands back a view of the module's buffer, one element past `shifted(0)`:
# `lead[i]` is `trail[i - 1]`, which the step before wrote. A call torchfix cannot see into
# is no new array, even on the line right before the loop.
import torch

RING = torch.zeros(16)


def shifted(start: int) -> torch.Tensor:
    return RING[start:]


def flood():
    lead: torch.Tensor = shifted(0)
    trail = shifted(1)
    for i in range(trail.size(0)):
        if lead[i] > 0:
            trail[i] = 1
    return RING
