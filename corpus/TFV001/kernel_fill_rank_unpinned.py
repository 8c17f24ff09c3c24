# Trap: nothing pins the weight's rank, and a 5-D weight takes each number into a whole row: one 2-D batch does not.
import math

import torch


def bilinear_kernel(w: torch.Tensor) -> torch.Tensor:
    f = math.ceil(w.size(2) / 2)
    c = (2 * f - 1 - f % 2) / (2.0 * f)
    for i in range(w.size(2)):
        for j in range(w.size(3)):
            w[0, 0, i, j] = (1 - math.fabs(i / f - c)) * (1 - math.fabs(j / f - c))
    return w
