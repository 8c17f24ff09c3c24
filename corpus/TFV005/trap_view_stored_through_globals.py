# Trap: `globals()` stores a view of `cells` as the module's `LAST`, one element behind `after`:
# the loop reads it back through the global name.
import torch


def fill(cells: torch.Tensor):
    cells = cells.view(-1)
    globals()["LAST"] = cells[:-1]
    before: torch.Tensor = LAST.view(-1)  # noqa: F821 - bound by the line above
    after = cells[1:]
    for i in range(after.size(0)):
        if before[i] > 0:
            after[i] = 1
    return cells
