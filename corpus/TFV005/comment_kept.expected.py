# Comments on and inside the loop are kept above the rewrite.
# bench: positive_part(x=float32[n])
import torch


def positive_part(x: torch.Tensor) -> torch.Tensor:
    # drop the negative part
    # one element at a time
    x[x < 0.0] = 0.0
    return x
