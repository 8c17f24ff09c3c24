# The None-initial form written with `is not None` first.
import torch


def merge_outputs(outputs):
    merged = None
    merged_parts = []
    for o in outputs:
        merged_parts.append(o)
    merged = merged_parts[0] if len(merged_parts) == 1 else torch.cat(merged_parts, dim=0) if merged_parts else None
    return merged
