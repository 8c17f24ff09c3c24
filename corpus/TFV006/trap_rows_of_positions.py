# Nothing pins `idx` to one dimension: a row of positions per step writes each of them once, even a repeated one, where accumulate=True would count it twice.
import torch


def degrees(idx: torch.Tensor, k: int) -> torch.Tensor:
    deg = torch.zeros(k)
    for i in range(len(idx)):
        deg[idx[i]] += 1
    return deg
