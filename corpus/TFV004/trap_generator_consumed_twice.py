# Trap: a generator is consumed twice -- the second loop sees nothing -- and a generator has no `.sum()`.
import torch


def total_and_count(values):
    stream = (torch.as_tensor(v) for v in values)
    total = 0.0
    for v in stream:
        total += v.item()
    count = 0
    for v in stream:
        count += 1
    return total, count
