# Python arithmetic around .item(): the rewrite squares in float64 like Python floats do.
# bench: sum_of_squares(x=float32[n])
import torch


def sum_of_squares(x: torch.Tensor) -> float:
    ss = 0.0
    for i in range(len(x)):
        ss += x[i].item() ** 2
    return ss
