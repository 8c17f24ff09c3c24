# Per-sample ReLU and squared sum with ranks the code does not pin: torch.vmap keeps it right.
# bench: energies(x=float32[n,16])
import torch


def energies(x: torch.Tensor) -> torch.Tensor:
    return torch.vmap(lambda xi: (torch.relu(xi) ** 2).sum())(x)
