# The None-initial form written with `is not None` first.
import torch


def merge_outputs(outputs):
    merged = None
    for o in outputs:
        if merged is not None:
            merged = torch.cat((merged, o), dim=0)
        else:
            merged = o
    return merged
