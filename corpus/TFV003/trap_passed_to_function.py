# Trap: the grown value is passed to a function at every step (a progress callback).
import torch


def collect(batches, report):
    seen = torch.empty(0, 8)
    for b in batches:
        seen = torch.cat([seen, b])
        report(seen)
    return seen
