# Confusion matrix: two index tensors, one accumulating index_put_.
# bench: confusion(truth=index64[n]<4>, pred=index64[n]<4>)
import torch


def confusion(truth: torch.Tensor, pred: torch.Tensor) -> torch.Tensor:
    truth = truth.view(-1)
    pred = pred.view(-1)
    cm = torch.zeros(4, 4, dtype=torch.long)
    cm.index_put_((truth.long(), pred[:truth.size(0)].long()), cm.new_ones(()), accumulate=True)
    return cm
