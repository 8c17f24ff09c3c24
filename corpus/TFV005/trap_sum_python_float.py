# Trap: the sum starts as a Python float and stays one when nothing is selected; no faithful form.
import torch


def kept_total(v: torch.Tensor, keep: torch.Tensor):
    total = 0.0
    for i in range(len(v)):
        if keep[i]:
            total += v[i]
    return total
