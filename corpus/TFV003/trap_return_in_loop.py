# Trap: a return inside the loop hands back the partially grown value.
import torch


def until_nan(rows):
    out = torch.empty(0, 3)
    for r in rows:
        if torch.isnan(r).any():
            return None
        out = torch.cat([out, r[None]])
    return out
