# Hand-written optimum for row_dots.py: one matrix-vector product, in the default dtype like `out`.
import torch


def row_dots(x: torch.Tensor, w: torch.Tensor) -> torch.Tensor:
    return (x @ w).to(torch.get_default_dtype())
