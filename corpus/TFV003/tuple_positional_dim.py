# A tuple and a positional dim: torch.cat((acc, piece), 0).
# bench: gather_chunks(x=float32[n,8])
import torch


def gather_chunks(x):
    acc = torch.zeros(0, 8)
    for start in range(0, x.shape[0], 4):
        piece = torch.relu(x[start:start + 4])
        acc = torch.cat((acc, piece), 0)
    return acc
