# Class histogram: count each label with a loop over range(len(labels)).
# bench: class_histogram(labels=index64[n]<16>, k=int[16])
import torch


def class_histogram(labels: torch.Tensor, k: int) -> torch.Tensor:
    labels = labels.view(-1)
    hist = torch.zeros(k, dtype=torch.long)
    hist.index_put_((labels.long(),), hist.new_ones(()), accumulate=True)
    return hist
