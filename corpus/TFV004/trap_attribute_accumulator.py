# Trap: the accumulator is an attribute; other methods may read it at any time.
import torch


class Meter:
    def __init__(self):
        self.total = 0.0

    def update(self, losses: torch.Tensor):
        for i in range(losses.size(0)):
            self.total += losses[i].item()
