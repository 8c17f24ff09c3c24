# Weighted scatter: `out[idx[i]] += src[i]` counts repeated indices, so `accumulate=True`.
# bench: segment_sums(idx=index64[n]<16>, src=float32[n], k=int[16])
import torch


def segment_sums(idx: torch.Tensor, src: torch.Tensor, k: int) -> torch.Tensor:
    idx = idx.view(-1)
    src = src.view(-1)
    out = torch.zeros(k)
    out.index_put_((idx.long(),), src[:idx.shape[0]].to(out.dtype), accumulate=True)
    return out
