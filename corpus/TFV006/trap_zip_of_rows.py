# zip over arrays whose rank nothing pins: each element may be a row of positions, which the loop writes once per step even where it repeats.
import torch


def confusion(targets: torch.Tensor, preds: torch.Tensor) -> torch.Tensor:
    matrix = torch.zeros(5, 5)
    for t, p in zip(targets, preds):
        matrix[t, p] += 1
    return matrix
