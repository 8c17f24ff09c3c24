# Clamping chain with literal bounds: clamp is faithful (NaN falls through to the else in both).
# bench: squash(x=float32[n], y=float32[n])
import torch


def squash(x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
    x = x.reshape(-1)
    y = y.view(-1)
    y[:x.size(0)] = x.clamp(-1.0, 1.0)
    return y
