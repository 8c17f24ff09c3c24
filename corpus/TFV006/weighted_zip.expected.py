# A weighted histogram over zip: each weight is added at its bin, a repeated bin every time.
# bench: weighted(bins=index64[n]<6>, weights=float32[n])
import torch


def weighted(bins: torch.Tensor, weights: torch.Tensor) -> torch.Tensor:
    bins = bins.view(-1)
    weights = weights.view(-1)
    out = torch.zeros(6)
    out.index_put_((bins[:len(weights)].long(),), weights[:len(bins)].to(out.dtype), accumulate=True)
    return out
