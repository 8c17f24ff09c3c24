# Hand-written optimum for element_count_int.py: count with the comparison's own int64 sum, no extra .long() pass.
import torch


def count_positive_iter(x):
    return (x > 0).sum().item()  # 0 for an empty tensor, a Python int either way
