# `out` is written only where `w[i] != 7.5`, and is a parameter: it may have fewer rows than `w`
# (the loop never writes the others). Filling the selected positions alone (`index_fill_`)
# writes what the loop writes, and raises past `out`'s end where the loop does.
# bench: fill(out=float32[n], w=float32[n])
import torch


def fill(out: torch.Tensor, w: torch.Tensor) -> torch.Tensor:
    w = w.view(-1).float()
    n = len(w)
    for i in range(n):
        if w[i] != 7.5:
            out[i] = 1.0
    return out
