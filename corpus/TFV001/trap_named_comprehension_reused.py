# Trap: the named list of rows is read again after it is stacked (its length goes back to the caller), so it must stay a list.
import torch
import torch.nn.functional as F


def activations(x: torch.Tensor, scale: float):
    rows = [F.relu(x[i]) * scale for i in range(x.size(0))]
    stacked = torch.stack(rows, dim=0)
    return stacked, len(rows)
