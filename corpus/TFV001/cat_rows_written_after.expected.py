# The rows the loop concatenates are rows of the input, so their batched form is a view of it; the function
# then writes into the result, which must not reach the caller's tensor: the rewrite copies (`.clone()`).
# bench: shifted_rows(x=float32[n,4], n=int)
import torch


def shifted_rows(x: torch.Tensor, n: int) -> torch.Tensor:
    out = x[:n].flatten(0, 1).clone()
    out += 1
    return out
