# Pairwise squared distances with two nested loops over two index sets.
# bench: pairwise(a=float32[n,8], b=float32[n,8])
import torch


def pairwise(a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
    n, d = a.shape
    m, _ = b.shape
    dist = torch.zeros(n, m)
    if n > 0 and m > 0:
        dist[:n, :m] = ((a[:n, None] - b[None, :m]) ** 2).sum(dim=-1)
    return dist
