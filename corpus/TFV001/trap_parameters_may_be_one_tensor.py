# Trap: `dst` and `src` are both parameters, so a caller may pass one tensor as both
# (`spread_first(buf, buf)`). Then every step after the first reads the row the first step
# wrote, and filling `dst` at once reads it before any write: the checker gives the two names
# one tensor where the old code writes into one of them, and refutes the rewrite.
import torch


def spread_first(dst: torch.Tensor, src: torch.Tensor) -> torch.Tensor:
    for i in range(dst.shape[0]):
        dst[i] = src[0] + 1.0
    return dst
