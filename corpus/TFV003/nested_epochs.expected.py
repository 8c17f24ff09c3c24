# Growth across nested loops: the list is hoisted out of the outer loop.
import torch


def replay(buffer_batches, epochs):
    seen = torch.empty(0, 2)
    seen_parts = []
    for epoch in range(epochs):
        for batch in buffer_batches:
            seen_parts.append(batch * (epoch + 1))
    seen = torch.cat([seen, *seen_parts])
    return seen
