# The None-initial form as one conditional expression.
import torch


def accumulate_logits(model, batches):
    logits = None
    for xb in batches:
        out = model(xb)
        logits = torch.cat((logits, out), dim=0) if logits is not None else out
    return logits
