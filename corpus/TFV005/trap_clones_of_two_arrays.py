# Trap: `torch.clone(x)` and `torch.clone(y)` copy two different arrays: nothing shows `z` is as
# long as `a`, and `z[i]` is read only under the `elif`.
import torch


def pick(x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
    a = torch.clone(x)
    z = torch.clone(y)
    out = torch.zeros(len(a))
    for i in range(len(a)):
        if a[i] == 7.5:
            out[i] = 1.0
        elif z[i] < 0:
            out[i] = 2.0
    return out
