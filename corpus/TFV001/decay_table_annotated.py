# A table of Python numbers per position, from annotated parameters, into `torch.tensor`.
import math

import torch


def decay_table(length: int, rate: float) -> torch.Tensor:
    return torch.tensor([math.exp(-rate * t) / (t + 1) for t in range(length)])
