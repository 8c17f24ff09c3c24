# Trap: the guarded store reads the row it wrote one step before (result[k - 1]): each step
# depends on the previous one, so no mask over the rows is equivalent.
import torch


def carry_forward(values: torch.Tensor) -> torch.Tensor:
    result = values.view(-1).clone()
    for k in range(1, result.size(0)):
        if result[k] == 0:
            result[k] = result[k - 1]
    return result
