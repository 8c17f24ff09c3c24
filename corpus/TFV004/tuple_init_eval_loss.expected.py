# The float accumulator starts in a tuple of literals (`loss, seen = 0., 0`), as evaluation
# scripts often write it: the start is still a literal the rewrite can read.
import torch
import torch.nn.functional as F


@torch.no_grad()
def evaluate(model, loader):
    loss, seen = 0.0, 0
    for images, labels in loader:
        batch_loss = F.cross_entropy(model(images), labels)
        loss += batch_loss.detach().double()
        seen += 1
    loss = float(loss)
    return loss, seen
