# Rows grown one at a time with a list and dim=0, from an empty float32 start.
# bench: collect(x=float32[n,16])
import torch


def collect(x: torch.Tensor) -> torch.Tensor:
    out = torch.empty(0, x.shape[1])
    for i in range(len(x)):
        row = x[i:i + 1] * 2.0
        out = torch.cat([out, row], dim=0)
    return out
