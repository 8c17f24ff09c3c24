# Per-sample scores collected into a named list, stacked and sorted on the next line, which unpacks the result back into the list's name.
# bench: ranked(x=float32[n,16])
import torch


def ranked(x: torch.Tensor):
    scores, order = torch.vmap(lambda xi: (xi * xi).sum())(x).sort(0, descending=True)
    return scores, order
