# One-hot rows for the first n labels: advanced-index assignment with torch.arange.
# bench: one_hot(labels=index64[n]<10>, n=int[n])
import torch


def one_hot(labels: torch.Tensor, n: int) -> torch.Tensor:
    labels = labels.view(-1)
    m = torch.zeros(n, 10)
    m[torch.arange(max(n, 0)), labels[:max(n, 0)].long()] = 1
    return m
