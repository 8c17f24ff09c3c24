# Only the rows that pass a test are appended; break on a sentinel is fine.
# bench: positives(x=float32[n,6])
import torch


def positives(x: torch.Tensor) -> torch.Tensor:
    picked = x.new_zeros((0, x.shape[1]))
    picked_parts = []
    for i in range(x.shape[0]):
        if x[i].sum() > 0:
            picked_parts.append(x[i:i + 1])
        if torch.isnan(x[i]).any():
            break
    picked = torch.cat([picked, *picked_parts])
    return picked
