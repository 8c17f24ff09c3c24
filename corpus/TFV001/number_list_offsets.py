# A literal list of numbers read one item per row: the list becomes an int64 tensor on the
# rows' device, cast to the rows' dtype as a Python int beside them is (int8 rows stay int8).
import torch


def shift(x: torch.Tensor) -> torch.Tensor:
    offsets = [1, -2, 3, 4]
    n, d = x.shape
    out = torch.empty_like(x)
    for i in range(n):
        out[i] = x[i] + offsets[i]
    return out
