# min over int() conversions of an integer label tensor.
# bench: smallest(labels=int64[n])
import torch


def smallest(labels: torch.Tensor) -> int:
    labels = labels.long()
    return min(int(v) for v in labels.flatten().tolist())
