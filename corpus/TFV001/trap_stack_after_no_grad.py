# Trap: the rows are computed under `torch.no_grad()` but stacked after it. Computing the batch
# where the stack stands would record it for autograd, which the loop never did.
import torch


def detached_rows(x: torch.Tensor, w: torch.Tensor):
    with torch.no_grad():
        rows = []
        for i in range(len(x)):
            rows.append(x[i] * w)
    rows = torch.stack(rows)
    return rows
