# Hand-written optimum for tensor_from_comparisons.py: the comparison itself is the bool tensor; empty input keeps torch.tensor([])'s float32.
import torch


def positive_mask(t: torch.Tensor) -> torch.Tensor:
    if t.numel() == 0:
        return torch.tensor([])  # torch.tensor of an empty list is float32, not bool
    return t.detach() > 0
