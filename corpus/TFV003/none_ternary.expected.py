# The None-initial form as one conditional expression.
import torch


def accumulate_logits(model, batches):
    logits = None
    logits_parts = []
    for xb in batches:
        out = model(xb)
        logits_parts.append(out)
    logits = logits_parts[0] if len(logits_parts) == 1 else torch.cat(logits_parts, dim=0) if logits_parts else None
    return logits
