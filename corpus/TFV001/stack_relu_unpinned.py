# Per-sample ReLU and squared sum with ranks the code does not pin: each sample's elements are
# summed as one flattened row, right for every rank (one-number samples too).
# bench: energies(x=float32[n,16])
import torch


def energies(x: torch.Tensor) -> torch.Tensor:
    return torch.stack([(torch.relu(x[i]) ** 2).sum() for i in range(x.shape[0])])
