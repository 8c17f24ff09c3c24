# Hand-written optimum for out_matvec.py: one matrix product x @ w.T, returned as it is (no zero buffer, no copy).
import torch


def project(x: torch.Tensor, w: torch.Tensor) -> torch.Tensor:
    return x @ w.T
