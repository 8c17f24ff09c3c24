# Trap: a fresh random draw per element; batching would change the random stream.
import torch


def noisy_total(x: torch.Tensor) -> float:
    total = 0.0
    for i in range(len(x)):
        total += (x[i] + torch.rand(())).item()
    return total
