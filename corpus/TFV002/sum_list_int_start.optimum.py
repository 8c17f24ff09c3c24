# Hand-written optimum for sum_list_int_start.py: a float64 tensor sum; an empty tensor still gives Python's int 0.
import torch


def total(x: torch.Tensor):
    if x.numel() == 0:
        return 0  # sum([]) is the int start
    return x.sum(dtype=torch.float64).item()
