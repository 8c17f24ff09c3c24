# Trap: `x[i]` is a view that takes in-place writes under autograd, where a row of `unbind` (or of
# `for row in x`) refuses them: a list of `x[i]` kept as a list is not `x.unbind(0)`, for a caller
# that later writes into one of its entries.
import torch


def rows(x: torch.Tensor, first: torch.Tensor) -> list:
    out = [first]
    for i in range(len(x)):
        out.append(x[i])
    return out
