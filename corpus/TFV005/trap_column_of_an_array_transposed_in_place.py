# Trap: `z` was a column of `p` before `p` was transposed in place through a second name: `p` now
# has other rows than `z`, and `z[i]` is read only under the `elif`.
import torch


def pick(p: torch.Tensor, x: torch.Tensor, out: torch.Tensor) -> torch.Tensor:
    z = p[:, 0]
    q = p
    q.t_()
    for i in range(len(p)):
        if x[i] == 7.5:
            out[i] = 1.0
        elif z[i] < 0:
            out[i] = 2.0
    return out
