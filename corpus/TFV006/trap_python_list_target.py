# The histogram is a Python list of ints: it has no index_put_.
import torch


def list_counts(labels: torch.Tensor, k: int) -> list:
    hist = [0] * k
    for i in range(len(labels)):
        hist[labels[i]] += 1
    return hist
