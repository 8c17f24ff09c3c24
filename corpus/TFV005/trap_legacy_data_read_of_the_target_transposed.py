# Trap: `grid.T[i]` is column `i` of the array the loop writes row by row: a step reads what an
# earlier step wrote through another view of the target.
import torch


def mirror_negatives(grid):
    grid = grid.view(grid.size(0), -1)
    for i in range(grid.size(0)):
        if grid.T[i][0] < 0:
            grid[i] = grid.T[i]
    return grid
