# Trap: an exponential moving average is a recurrence, not a sum.
import torch


def ema(x: torch.Tensor, decay: float = 0.9) -> float:
    h = 0.0
    for i in range(len(x)):
        h = decay * h + (1 - decay) * x[i].item()
    return h
