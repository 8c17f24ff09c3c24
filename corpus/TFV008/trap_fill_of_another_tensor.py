# Trap: every fill has the shape of the same tensor `template`, not of the part the loop walks:
# the lengths are `len(template)` each, whatever the parts are.
import torch


def repeated(parts, template):
    ids = torch.cat([torch.full_like(template, i) for i, p in enumerate(parts)])
    return ids
