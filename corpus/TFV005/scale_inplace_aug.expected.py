# In-place scaling of selected elements with an augmented assignment on the element.
# bench: damp(x=float32[n], mask=bool[n], factor=float)
import torch


def damp(x: torch.Tensor, mask: torch.Tensor, factor: float) -> torch.Tensor:
    mask = mask.view(-1)
    x_mask = mask[:x.size(0)].bool()
    x[x_mask] = (x * factor)[x_mask].to(x.dtype)
    return x
