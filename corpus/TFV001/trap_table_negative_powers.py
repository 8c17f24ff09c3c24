# Trap: `2 ** -t` is the int 1 at t = 0 and a float after it; an int64 `arange` raised to a
# negative power raises instead.
import torch


def halvings(n: int) -> torch.Tensor:
    return torch.tensor([2 ** -t for t in range(n)])
