# Trap: a model call per sample; one batched call assumes the model treats samples independently.
import torch


def embed(model, x: torch.Tensor) -> torch.Tensor:
    out = torch.zeros(x.shape[0], 16)
    for i in range(x.shape[0]):
        out[i] = model(x[i])
    return out
