# A training loop: one device sync per step for the running loss.
import torch


def train_epoch(model, loader, optimizer, criterion):
    model.train()
    running_loss = 0.0
    for inputs, targets in loader:
        optimizer.zero_grad()
        loss = criterion(model(inputs), targets)
        loss.backward()
        optimizer.step()
        running_loss += loss.detach().double()
    running_loss = float(running_loss)
    return running_loss / len(loader)
