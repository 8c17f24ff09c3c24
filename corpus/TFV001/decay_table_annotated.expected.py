# A table of Python numbers per position, from annotated parameters, into `torch.tensor`.
import math

import torch


def decay_table(length: int, rate: float) -> torch.Tensor:
    return (torch.exp(-rate * torch.arange(max(length, 0), dtype=torch.float64)) / (torch.arange(max(length, 0), dtype=torch.float64) + 1)).to(torch.get_default_dtype())
