# Trap: each tap draws a random number: a batched form would draw them in another order.
import random

import torch


def jittered(n: int, scale: float) -> torch.Tensor:
    return torch.tensor([scale * t + random.random() for t in range(n)])
