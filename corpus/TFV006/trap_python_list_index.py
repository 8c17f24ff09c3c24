# The indices are a Python list: nothing shows a tensor, and `hist[idx]` with a list means something else.
import torch


def list_histogram(idx, k: int) -> torch.Tensor:
    hist = torch.zeros(k)
    for i in range(len(idx)):
        hist[idx[i]] += 1
    return hist
