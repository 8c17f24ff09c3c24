# Hand-written optimum for elif_piecewise.py: nested torch.where over the three branches, copied into out (float32 throughout).
import torch


def piecewise(x: torch.Tensor, out: torch.Tensor) -> torch.Tensor:
    return out.copy_(torch.where(x < -1, -1 - x * 0.5, torch.where(x < 1, x * x, 2 * x - 1)))
