# Trap: the loop stops at the first non-finite row; batching would compute every row.
import torch


def until_nan(x: torch.Tensor) -> torch.Tensor:
    out = torch.zeros(x.shape[0])
    for i in range(x.shape[0]):
        if not torch.isfinite(x[i]).all():
            break
        out[i] = x[i].sum()
    return out
