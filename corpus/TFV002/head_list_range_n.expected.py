# range(n): only the first n elements; n may be negative (then the list is empty).
# bench: head(x=float32[n], n=int[n])
import torch


def head(x: torch.Tensor, n: int) -> list:
    return x[:max(n, 0)].flatten().tolist()
