# Trap: the loss of unknown kind is summed, but the running sum is handed to a logger inside the
# loop: it must stay a Python float at every step. The loop stays.
import torch


def evaluate(model, loader, compute_loss, log):
    total = 0.0
    for images, targets in loader:
        loss = compute_loss(model(images), targets)
        total += loss.item()
        log(total)
    return total
