# Hand-written optimum for rows_list_dim0.py: the doubled rows stacked are just x * 2.0.
import torch


def collect(x: torch.Tensor) -> torch.Tensor:
    return x * 2.0
