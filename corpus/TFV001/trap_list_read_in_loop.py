# Trap: the appended list is read inside the loop (each step uses the previous result).
import torch


def smooth(x: torch.Tensor) -> torch.Tensor:
    res = [x[0]]
    for i in range(1, len(x)):
        res.append(0.5 * res[-1] + 0.5 * x[i])
    return torch.stack(res)
