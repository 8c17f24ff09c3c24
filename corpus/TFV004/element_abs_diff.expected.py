# Two tensors indexed by the loop: the other tensor is sliced to the loop's extent.
# bench: l1_distance(a=float32[n], b=float32[n])
import torch


def l1_distance(a: torch.Tensor, b: torch.Tensor) -> float:
    dist = (a.flatten() - b[:a.size(0)].flatten()).abs().sum(dtype=torch.float64).item()
    return dist
