# Trap: a model call per element; batching it assumes the model treats samples independently.
import torch


def scores(model, x: torch.Tensor) -> list:
    return [model(x[i]).item() for i in range(len(x))]
