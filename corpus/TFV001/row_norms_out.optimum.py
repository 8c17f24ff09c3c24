# Hand-written optimum for row_norms_out.py: one batched vector norm over dim 1, returned as it is.
import torch


def row_norms(x: torch.Tensor) -> torch.Tensor:
    return torch.linalg.vector_norm(x, dim=1)
