# Extent spelled x.numel(): the same loop, one more spelling.
# bench: flat_total(x=float32[n])
import torch


def flat_total(x: torch.Tensor):
    t = 0.0
    for j in range(x.numel()):
        t += x[j].item()
    return t
