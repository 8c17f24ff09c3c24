# int(v) per element over range(0, labels.size(0)).
# bench: label_ids(labels=int64[n])
import torch


def label_ids(labels: torch.Tensor) -> list:
    ids = [int(v) for v in labels.flatten().tolist()]
    return ids
