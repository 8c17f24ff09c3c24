# An int weight added into an int32 histogram: the loop wraps it into int32 as it adds, so the weight is cast with .to(), which wraps too (as_tensor(w, dtype=torch.int32) raises past 2**31).
# bench: weighted_counts(idx=index64[n]<4>, w=int[3])
import torch


def weighted_counts(idx: torch.Tensor, w: int) -> torch.Tensor:
    hist = torch.zeros(4, dtype=torch.int32)
    hist.index_put_((idx.view(-1).long(),), torch.as_tensor(w, device=hist.device).to(hist.dtype), accumulate=True)
    return hist
