# The loop runs over range(n): n may be smaller than the tensor, or negative.
# bench: head_sum(x=float32[n], n=int[n])
import torch


def head_sum(x: torch.Tensor, n: int) -> float:
    s = 0.0
    for i in range(n):
        s += x[i].item()
    return s
