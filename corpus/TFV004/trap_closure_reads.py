# Trap: a callback defined in the function reads the accumulator during the loop.
import torch


def train(model, loader, optimizer, log):
    running = 0.0

    def report():
        log(running)

    for batch in loader:
        loss = model(batch)
        loss.backward()
        optimizer.step()
        running += loss.item()
        log.every(100, report)
    return running
