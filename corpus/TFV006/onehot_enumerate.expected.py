# One-hot targets over enumerate(labels): the index walks the rows, the element picks the column.
# bench: one_hot(labels=index64[n]<10>)
import torch


def one_hot(labels: torch.Tensor) -> torch.Tensor:
    labels = labels.view(-1)
    out = torch.zeros(len(labels), 10)
    out[torch.arange(len(labels)), labels.long()] = 1
    return out
