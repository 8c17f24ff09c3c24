# Trap: the loop counts `p.numel()` elements, not `p`'s rows: `z = p[:, 0]` has fewer elements than
# the loop runs, and `z[i]` is read only under the `elif`.
import torch


def pick(p: torch.Tensor, w: torch.Tensor, out: torch.Tensor) -> torch.Tensor:
    z = p[:, 0]
    for i in range(p.numel()):
        if w[i] == 7.5:
            out[i] = 1.0
        elif z[i] < 0:
            out[i] = 2.0
    return out
