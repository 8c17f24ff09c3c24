# Detection targets: each row of `boxes` holds (image, row, column) of one object; the loop marks
# its cell in a grid. The columns come unpacked from one transposed array, which shows they are
# tensors of one dimension: one advanced-index assignment marks every cell.
# bench: mark_cells(grid=float32[4,8,8], boxes=float32[n,3])
import torch


def mark_cells(grid: torch.Tensor, boxes: torch.Tensor) -> torch.Tensor:
    b, gj, gi = boxes.view(-1, 3).long().t()
    for i in range(len(b)):
        grid[b[i], gj[i], gi[i]] = 1
    return grid
