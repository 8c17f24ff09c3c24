# Trap: noise drawn per sample; batching would reorder the random draws.
import torch


def noisy(x: torch.Tensor) -> torch.Tensor:
    out = torch.zeros_like(x)
    for i in range(len(x)):
        out[i] = x[i] + 0.1 * torch.randn_like(x[i])
    return out
