# Python arithmetic around .item(): the rewrite squares in float64 like Python floats do.
# bench: sum_of_squares(x=float32[n])
import torch


def sum_of_squares(x: torch.Tensor) -> float:
    ss = (x.double() ** 2).sum(dtype=torch.float64).item()
    return ss
