# Trap: `x.chunk(2)` gives two halves, not rows (and `len(x) // 2` rows per half is only a
# guess): each appended chunk is a block of rows, which no `unbind` of `x` reproduces.
import torch


def halves(x: torch.Tensor, first: torch.Tensor) -> list:
    parts = [first]
    for part in x.chunk(2):
        parts.append(part.squeeze(0))
    return parts
