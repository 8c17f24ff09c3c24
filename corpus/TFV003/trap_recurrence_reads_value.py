# Trap: each new row depends on the last grown row (a recurrence).
import torch


def integrate(deltas):
    path = torch.zeros(1, 2)
    for d in deltas:
        path = torch.cat([path, path[-1:] + d])
    return path
