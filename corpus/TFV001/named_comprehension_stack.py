# Per-sample activation collected by a comprehension into a named list, stacked on the next line.
# bench: activations(x=float32[n,32], scale=float)
import torch
import torch.nn.functional as F


def activations(x: torch.Tensor, scale: float) -> torch.Tensor:
    rows = [F.relu(x[i]) * scale for i in range(x.size(0))]
    rows = torch.stack(rows, dim=0)
    return rows
