# Per-row L2 norm into a preallocated vector; ranks pinned by `n, d = x.shape`.
# bench: row_norms(x=float32[n,64])
import torch


def row_norms(x: torch.Tensor) -> torch.Tensor:
    n, d = x.shape
    out = torch.zeros(n)
    out[:] = x.norm(dim=1)
    return out
