# A list of Python numbers from a 1-D tensor, one .item() per element.
# bench: scores_to_list(scores=float32[n])
import torch


def scores_to_list(scores: torch.Tensor) -> list:
    return [s.item() for s in scores]
