# Trap: the table reads a list at each position: the list may be shorter than the count, and
# a Python list of numbers has no batched form here.
import math

import torch


def log_table(weights, n: int) -> torch.Tensor:
    return torch.tensor([math.log(weights[t]) for t in range(n)])
