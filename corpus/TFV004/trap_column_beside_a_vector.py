# Nothing pins `a` to one dimension: as a column, `a[i]` is 1-D and keeps its narrow dtype against the 0-d `b[i]` (int8 - int64 wraps in int8), where a batched form of two flattened operands computes in int64.
import torch


def l1_distance(a: torch.Tensor, b: torch.Tensor) -> float:
    dist = 0.0
    for i in range(a.size(0)):
        dist += (a[i] - b[i]).abs().item()
    return dist
