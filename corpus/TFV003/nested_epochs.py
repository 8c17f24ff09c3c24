# Growth across nested loops: the list is hoisted out of the outer loop.
import torch


def replay(buffer_batches, epochs):
    seen = torch.empty(0, 2)
    for epoch in range(epochs):
        for batch in buffer_batches:
            seen = torch.cat([seen, batch * (epoch + 1)])
    return seen
