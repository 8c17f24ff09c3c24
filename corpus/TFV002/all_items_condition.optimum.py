# Hand-written optimum for all_items_condition.py: a tensor reduction and one bool, no Python pass over the elements.
import torch


def all_small(x: torch.Tensor) -> bool:
    # NaN fails `< 10` in both; an empty tensor is all() == True in both
    return bool((x.abs() < 10).all())
