# `out[idx[i]] = src[i]` with repeated indices: the last write wins in the loop, undefined when vectorized.
import torch


def last_write(idx: torch.Tensor, src: torch.Tensor) -> torch.Tensor:
    out = torch.zeros(8)
    for i in range(len(idx)):
        out[idx[i]] = src[i]
    return out
