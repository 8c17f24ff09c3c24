# Trap: `lo[i]` is read only where `x[i] <= hi[i]`, so `lo` may have fewer elements than `y`
# (every element past its end above `hi`): the loop runs, and any batched form reads all of `lo`
# and raises. Nothing shows `lo` is as long as the loop, so it must stay a loop.
import torch


def box(x: torch.Tensor, lo: torch.Tensor, hi: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
    for i in range(len(y)):
        if x[i] > hi[i]:
            y[i] = hi[i]
        elif x[i] < lo[i]:
            y[i] = lo[i]
        else:
            y[i] = x[i]
    return y
