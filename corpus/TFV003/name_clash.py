# The natural list name is taken already: a numbered one is used.
# bench: halves(x=float32[n,4])
import torch


def halves(x):
    out_parts = x.chunk(2)
    out = torch.empty(0, 4)
    for part in out_parts:
        out = torch.cat([out, part / 2], dim=0)
    return out
