# The list is made a few lines before its loop; the statements in between do not touch it, so
# it is still a list the loop alone fills.
# bench: row_norms(x=float32[n,32])
import torch


def row_norms(x: torch.Tensor) -> torch.Tensor:
    norms = []
    n, d = x.shape
    eps = 1e-6
    for i in range(n):
        norms.append((x[i] * x[i]).sum().sqrt() + eps)
    return torch.stack(norms)
