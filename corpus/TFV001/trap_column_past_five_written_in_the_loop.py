# Each row is scaled by the class column of row 5, which the loop itself rescales when it reaches
# row 5: rows after it see the new value. A batched form reads the old one everywhere.
import torch


def rescale_by_row_five(targets: torch.Tensor) -> torch.Tensor:
    for i in range(targets.size(0)):
        targets[i, :5] = targets[i, :5] * targets[5, 5]
        targets[i, 5] = targets[i, 5] * 2
    return targets
