# Per-sample comparison against a threshold, with a comment before the loop.
# bench: above(x=float32[n,16], t=float32[16])
import torch


def above(x: torch.Tensor, t: torch.Tensor) -> torch.Tensor:
    # one mask per sample
    return torch.vmap(lambda row: row > t)(x)
