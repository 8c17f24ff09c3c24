# Trap: the running loss is printed every step; converting there would sync anyway.
import torch


def train(model, loader, optimizer):
    running = 0.0
    for step, batch in enumerate(loader):
        loss = model(batch)
        loss.backward()
        optimizer.step()
        running += loss.item()
        print(f"step {step}: {running / (step + 1):.4f}")
    return running
