# Trap: accumulation over `sorted()` of a list comprehension: `norms` is a Python list of floats, which has no `.sum(dtype=...)`.
import torch


def clipped_total(grads, keep):
    norms = sorted([g.norm().item() for g in grads])
    total = 0.0
    for i in range(keep):
        total += float(norms[i])
    return total
