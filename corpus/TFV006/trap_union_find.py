# Union-find: parent links are followed through values the loop itself writes.
import torch


def union_all(parent: torch.Tensor, a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
    for i in range(len(a)):
        parent[parent[a[i]]] = parent[b[i]]
    return parent
