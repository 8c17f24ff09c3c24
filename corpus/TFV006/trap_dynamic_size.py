# The number of results depends on the data: a list grows only for first occurrences.
import torch


def first_occurrences(idx: torch.Tensor) -> list:
    seen = torch.zeros(16, dtype=torch.bool)
    firsts = []
    for i in range(len(idx)):
        if not seen[idx[i]]:
            firsts.append(i)
        seen[idx[i]] = True
    return firsts
