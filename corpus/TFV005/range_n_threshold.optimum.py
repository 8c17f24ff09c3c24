# Hand-written optimum for range_n_threshold.py: the comparison written straight into the first n entries of y (out=).
import torch


def threshold(x: torch.Tensor, y: torch.Tensor, n: int, t: float) -> torch.Tensor:
    k = max(n, 0)  # range(n) is empty for a negative n
    torch.ge(x[:k], t, out=y[:k])
    return y
