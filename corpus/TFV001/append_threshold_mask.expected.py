# Per-sample comparison against a threshold, with a comment before the loop.
# bench: above(x=float32[n,16], t=float32[16])
import torch


def above(x: torch.Tensor, t: torch.Tensor) -> torch.Tensor:
    masks = []
    # one mask per sample
    for row in x:
        masks.append(row > t)
    return torch.stack(masks)
