# Trap: the list is handed to a callback between its creation and the loop; the callback may
# keep it and see every append. It must stay a list.
import torch


def collect(x: torch.Tensor, register):
    n, d = x.shape
    rows = []
    register(rows)
    for i in range(n):
        rows.append(x[i] * 2)
    return torch.stack(rows)
