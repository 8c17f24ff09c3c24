# Trap: one random draw per element; a single batched draw would consume the RNG differently.
import torch


def jitter(x: torch.Tensor) -> torch.Tensor:
    return torch.tensor([(v + torch.randn(())).item() for v in x])
