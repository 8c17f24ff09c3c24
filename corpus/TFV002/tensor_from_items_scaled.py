# torch.tensor of Python floats: a CPU float32 tensor whatever the input dtype.
# bench: halve(x=float32[n])
import torch


def halve(x: torch.Tensor) -> torch.Tensor:
    return torch.tensor([x[i].item() / 2 for i in range(len(x))])
