# Trap: the loop reads `n` rows that may not exist, inside a `try` that turns the IndexError into `None`.
# The checker compares runs where the old code does not raise; here raising is what the function does
# with too large an `n`, and the batched slice `x[:n]` would not raise at all. It must stay.
import torch


def first_row_sums(x: torch.Tensor, n: int):
    x = x.reshape(x.size(0), -1)
    try:
        sums = []
        for i in range(n):
            sums.append(x[i].sum())
        return torch.stack(sums)
    except IndexError:
        return None
