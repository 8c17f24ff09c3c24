# torch.vstack growth with 1-D rows.
# bench: normalize_rows(x=float32[n,8])
import torch


def normalize_rows(x):
    out = torch.empty(0, x.shape[1])
    out_parts = []
    for row in x:
        out_parts.append(row / (row.norm() + 1e-6))
    out = torch.vstack([out, *out_parts])
    return out
