# Nothing pins `x` to one dimension: as a column (n, 1) each `x[i]` is still one number to test, but a batched mask of shape (n, 1) selects other positions of `y`.
import torch


def zero_where_positive(x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
    for i in range(len(x)):
        if x[i] > 0:
            y[i] = 0
    return y
