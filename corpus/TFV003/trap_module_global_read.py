# Trap: at module level, a function reads the global that the loop grows.
import torch

history = torch.empty(0, 3)


def last_entry():
    return history[-1]


for step in range(5):
    history = torch.cat([history, torch.full((1, 3), float(step))])
    print(last_entry())
