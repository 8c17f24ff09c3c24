# Hand-written optimum for stack_relu_unpinned.py: relu, square and a row sum on the whole batch, no vmap.
import torch


def energies(x: torch.Tensor) -> torch.Tensor:
    return torch.relu(x).square().sum(dim=1)
