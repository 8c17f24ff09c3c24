# torch.tensor of Python bools gives a bool tensor.
# bench: positive_mask(t=float32[n])
import torch


def positive_mask(t: torch.Tensor) -> torch.Tensor:
    t = t.detach()
    return torch.tensor([v.item() > 0 for v in t])
