# An [N, 1] column: .item() works per row, .tolist() alone would nest; the rewrite flattens.
# bench: column_values(col=float32[n,1])
import torch


def column_values(col: torch.Tensor) -> list:
    assert col.dim() == 2
    return col.flatten().tolist()
