# Two stores of numbers at per-sample positions: where a later row's first position is an earlier
# row's second one, the loop leaves the later write (1), while two batched stores would leave the
# second store's value (0) everywhere it reaches. The order of the writes matters: untouched.
import torch


def mark(grid: torch.Tensor, first, second):
    first = first.reshape(-1)
    second = second.reshape(-1)
    for k in range(len(first)):
        grid[first[k]] = 1
        grid[second[k]] = 0
    return grid
