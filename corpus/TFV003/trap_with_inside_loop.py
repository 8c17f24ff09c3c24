# Trap: the concatenation runs under no_grad inside the loop; hoisting it would leave that context.
import torch


def detached_outputs(model, loader):
    outs = torch.empty(0, 10)
    for x in loader:
        y = model(x)
        with torch.no_grad():
            outs = torch.cat([outs, y])
    return outs
