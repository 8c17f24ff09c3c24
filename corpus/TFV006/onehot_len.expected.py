# One-hot targets over range(len(y)) with a float literal.
# bench: targets(y=index64[n]<5>)
import torch


def targets(y: torch.Tensor) -> torch.Tensor:
    y = y.view(-1)
    onehot = torch.zeros(len(y), 5)
    onehot[torch.arange(len(y)), y.long()] = 1.0
    return onehot
