# Trap: a print per sample; batching would drop or reorder the output.
import torch


def verbose(x: torch.Tensor) -> torch.Tensor:
    out = torch.zeros(x.shape[0])
    for i in range(x.shape[0]):
        out[i] = x[i].sum()
        print(i, out[i])
    return out
