# Trap: ragged pieces are skipped by catching the concatenation's error at that step.
import torch


def keep_matching(pieces):
    out = torch.empty(0, 5)
    for p in pieces:
        try:
            out = torch.cat([out, p])
        except RuntimeError:
            continue
    return out
