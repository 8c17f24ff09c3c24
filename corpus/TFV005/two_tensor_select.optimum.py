# Hand-written optimum for two_tensor_select.py: one torch.where into out (not maximum: NaN in a picks b, as before).
import torch


def pick_larger(a: torch.Tensor, b: torch.Tensor, out: torch.Tensor) -> torch.Tensor:
    return torch.where(a >= b, a, b, out=out)
