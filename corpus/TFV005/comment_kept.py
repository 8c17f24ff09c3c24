# Comments on and inside the loop are kept above the rewrite.
# bench: positive_part(x=float32[n])
import torch


def positive_part(x: torch.Tensor) -> torch.Tensor:
    # drop the negative part
    for i in range(len(x)):
        # one element at a time
        if x[i] < 0.0:
            x[i] = 0.0
    return x
