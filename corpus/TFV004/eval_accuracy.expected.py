# An evaluation loop with two accumulators: a weighted loss sum and an int count of hits.
import torch


@torch.no_grad()
def evaluate(model, loader, criterion):
    total_loss = 0.0
    correct = 0
    seen = 0
    for images, labels in loader:
        logits = model(images)
        loss = criterion(logits, labels)
        total_loss += loss.item() * images.size(0)
        correct += (logits.argmax(dim=1) == labels).sum()
        seen += labels.size(0)
    correct = int(correct)
    return total_loss / seen, correct / seen
