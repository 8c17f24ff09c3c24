# Trap: a list's `.copy()` holds the same items: `before` is a view of `cells` one element behind
# `after`, so the loop reads what the step before wrote.
import torch


def fill(cells: torch.Tensor):
    cells = cells.view(-1)
    parts = [cells[:-1]]
    snapshot = parts.copy()
    before: torch.Tensor = snapshot[0]
    after = cells[1:]
    for i in range(after.size(0)):
        if before[i] > 0:
            after[i] = 1
    return cells
