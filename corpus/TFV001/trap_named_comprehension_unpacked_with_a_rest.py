# Trap: the line that stacks the list unpacks the stacked rows with a starred target, so `scores` ends up a Python list of the remaining rows; the rows are then read back one by one.
import torch


def leading(x: torch.Tensor):
    scores = [x[i] * 2 for i in range(x.size(0))]
    first, *scores = torch.stack(scores, 0)
    return first, [s.sum() for s in scores]
