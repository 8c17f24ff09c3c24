# Trap: the list is handed to a log before the loop fills it. The log holds the same list object, so it
# sees every number the loop appends; rebinding the name to a new list at once would leave the log's list
# empty. It must stay.
import torch


def norms_logged(x: torch.Tensor, log: dict):
    x = x.reshape(x.size(0), -1)
    norms = []
    log["norms"] = norms
    for i in range(x.size(0)):
        norms.append(x[i].norm().item())
    return norms
