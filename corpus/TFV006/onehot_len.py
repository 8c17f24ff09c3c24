# One-hot targets over range(len(y)) with a float literal.
# bench: targets(y=index64[n]<5>)
import torch


def targets(y: torch.Tensor) -> torch.Tensor:
    y = y.view(-1)
    onehot = torch.zeros(len(y), 5)
    for i in range(len(y)):
        onehot[i, y[i]] = 1.0
    return onehot
