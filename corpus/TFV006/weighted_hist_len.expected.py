# Weighted histogram over a loop measured on the bins; the weights are sliced to that extent.
# bench: weighted_histogram(bins=index64[n]<20>, w=float64[n])
import torch


def weighted_histogram(bins: torch.Tensor, w: torch.Tensor) -> torch.Tensor:
    bins = bins.view(-1)
    w = w.view(-1)
    hist = torch.zeros(20, dtype=torch.float64)
    hist.index_put_((bins.long(),), w[:len(bins)].to(hist.dtype), accumulate=True)
    return hist
