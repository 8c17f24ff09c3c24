# Trap: a helper called each step reads the growing global through the module namespace.
import torch

seen = torch.empty(0, 2)


def count_seen():
    return seen.shape[0]


def feed(batches):
    global seen
    for b in batches:
        seen = torch.cat([seen, b])
        if count_seen() > 100:
            break
