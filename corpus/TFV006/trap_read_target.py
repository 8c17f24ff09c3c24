# The written tensor is read in the same statement at another position: vectorizing would read stale values.
import torch


def chain(idx: torch.Tensor) -> torch.Tensor:
    out = torch.ones(8)
    for i in range(len(idx)):
        out[idx[i]] += out[idx[i] - 1]
    return out
