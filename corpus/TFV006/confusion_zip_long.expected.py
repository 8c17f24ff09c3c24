# The confusion matrix as evaluation scripts write it: zip over flattened targets and predictions, each element cast with .long().
# bench: confusion(targets=index64[n]<5>, preds=index64[n]<5>)
import torch


def confusion(targets: torch.Tensor, preds: torch.Tensor) -> torch.Tensor:
    matrix = torch.zeros(5, 5)
    matrix.index_put_((targets.view(-1)[:len(preds.view(-1))].long(), preds.view(-1)[:len(targets.view(-1))].long()), matrix.new_ones(()), accumulate=True)
    return matrix
