# Two tensors indexed by the loop: the other tensor is sliced to the loop's extent.
# bench: l1_distance(a=float32[n], b=float32[n])
import torch


def l1_distance(a: torch.Tensor, b: torch.Tensor) -> float:
    a = a.view(-1)
    b = b.view(-1)
    dist = 0.0
    for i in range(a.size(0)):
        dist += (a[i] - b[i]).abs().item()
    return dist
