# Trap: `out` is written only where `w[i] * 2 != 7.5`, and is a parameter: it may have fewer
# rows than `w` (the loop never writes the others), and a batched store writes every row. (With
# the test inline, TFV005 writes the selected positions alone, `index_fill_`, which holds; a
# temporary keeps the loop TFV001's.)
import torch


def fill(out: torch.Tensor, w: torch.Tensor) -> torch.Tensor:
    w = w.view(-1).float()
    n = len(w)
    for i in range(n):
        v = w[i] * 2
        if v != 7.5:
            out[i] = 1.0
    return out
