# Trap: left at its default, `src` is `out` itself. The checker never draws None for an input,
# so only the aliasing sweep sees that case: `src` and `out` are linked by the line before the
# loop, and given one tensor the loop reads at each step what the step before it wrote.
import torch


def spread_default(out: torch.Tensor, src=None) -> torch.Tensor:
    src = out if src is None else src
    for i in range(out.size(0)):
        out[i] = src[0] + 1.0
    return out
