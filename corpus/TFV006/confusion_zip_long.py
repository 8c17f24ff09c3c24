# The confusion matrix as evaluation scripts write it: zip over flattened targets and predictions, each element cast with .long().
# bench: confusion(targets=index64[n]<5>, preds=index64[n]<5>)
import torch


def confusion(targets: torch.Tensor, preds: torch.Tensor) -> torch.Tensor:
    matrix = torch.zeros(5, 5)
    for t, p in zip(targets.view(-1), preds.view(-1)):
        matrix[t.long(), p.long()] += 1
    return matrix
