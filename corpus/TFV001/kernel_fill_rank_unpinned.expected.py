# Nothing pins the weight's rank: a 5-D weight takes each number into a whole row, so a 2-D batch would be
# wrong; the inner loop is stored with its batch axis last, which fills each slot whatever its rank.
import math

import torch


def bilinear_kernel(w: torch.Tensor) -> torch.Tensor:
    f = math.ceil(w.size(2) / 2)
    c = (2 * f - 1 - f % 2) / (2.0 * f)
    for i in range(w.size(2)):
        w[0, 0, i, :w.size(3)].movedim(0, -1)[...] = (1 - math.fabs(i / f - c)) * (1 - torch.abs(torch.arange(w.size(3), device=w.device, dtype=torch.float64) / f - c))
    return w
