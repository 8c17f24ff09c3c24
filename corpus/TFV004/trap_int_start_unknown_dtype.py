# Trap: `total = 0` with values of unknown dtype: int for integer tensors, float otherwise.
import torch


def total_score(model, loader):
    total = 0
    for batch in loader:
        score = model(batch)
        total += score.item()
    return total
