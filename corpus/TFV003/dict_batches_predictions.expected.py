# Predictions from dict batches (batch["image"]) with a tuple and dim=0; the model is opaque.
import torch


@torch.no_grad()
def predict(model, loader):
    probs = torch.zeros((0, 10))
    probs_parts = []
    for batch in loader:
        logits = model(batch["image"])
        probs_parts.append(logits.softmax(dim=1))
    probs = torch.cat((probs, *probs_parts), dim=0)
    return probs
