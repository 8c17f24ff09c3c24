# Trap: a fresh random draw per selected element; batching would change the random stream.
import torch


def dropout_like(x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
    for i in range(len(x)):
        if x[i] > 0:
            y[i] = x[i] * torch.rand(())
        else:
            y[i] = 0
    return y
