# Sample rows stacked vertically for a preview grid, the `None`-initial way, along dimension -2.
# A lone row is never concatenated (the loop leaves that row itself, whatever its rank), so the
# final form keeps it as it is and concatenates only two rows or more.
import torch


def preview_grid(pairs):
    grid = None
    for real, fake in pairs:
        row = torch.cat((real, fake), -1)
        row = row.view(1, *row.shape)
        grid = row if grid is None else torch.cat((grid, row), -2)
    return grid
