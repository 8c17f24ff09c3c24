# Hand-written optimum for invariant_weight.py: a bincount times the weight (exact here: 0.5 times a small count).
import torch


def votes(voters: torch.Tensor, weight: float) -> torch.Tensor:
    return torch.bincount(voters, minlength=6) * weight  # int64 * float: float32, like the zeros
