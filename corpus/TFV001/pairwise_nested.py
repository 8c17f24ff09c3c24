# Pairwise squared distances with two nested loops over two index sets.
# bench: pairwise(a=float32[n,8], b=float32[n,8])
import torch


def pairwise(a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
    n, d = a.shape
    m, _ = b.shape
    dist = torch.zeros(n, m)
    for i in range(n):
        for j in range(m):
            dist[i, j] = ((a[i] - b[j]) ** 2).sum()
    return dist
