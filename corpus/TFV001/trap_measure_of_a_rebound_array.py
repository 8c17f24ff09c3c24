# Trap: `n` measured `x` before `x` was cut to two rows: `range(n)` no longer walks all of `x`, which
# is read only where `w[i] != 7.5`.
import torch


def pick(x: torch.Tensor, w: torch.Tensor) -> torch.Tensor:
    n = len(x)
    x = x[:2]
    out = torch.zeros(n)
    for i in range(n):
        if w[i] != 7.5 and x[i] > 0:
            out[i] = 1.0
    return out
