# Trap: the loop reads the grown value (`out.shape[0]`) to decide when to stop.
import torch


def first_k(chunks, k):
    out = torch.empty(0, 4)
    for y in chunks:
        out = torch.cat([out, y], dim=0)
        if out.shape[0] >= k:
            break
    return out[:k]
