# In-place scaling of selected elements with an augmented assignment on the element.
# bench: damp(x=float32[n], mask=bool[n], factor=float)
import torch


def damp(x: torch.Tensor, mask: torch.Tensor, factor: float) -> torch.Tensor:
    mask = mask.view(-1)
    for i in range(x.size(0)):
        if mask[i]:
            x[i] *= factor
    return x
