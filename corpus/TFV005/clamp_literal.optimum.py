# Hand-written optimum for clamp_literal.py: clamp written straight into y (out=), no temporary and copy.
import torch


def squash(x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
    return torch.clamp(x, -1.0, 1.0, out=y)  # NaN passes through, as it falls to the else branch
