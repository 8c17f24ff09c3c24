# Trap: the exception carries a view of `cells` one element behind `after`, and the handler
# reads it back: `before[i]` is `after[i - 1]`, which the step before wrote.
import torch


def fill(cells: torch.Tensor):
    cells = cells.view(-1)
    try:
        raise LookupError(cells[:-1])
    except LookupError as error:
        before: torch.Tensor = error.args[0]
    after = cells[1:]
    for i in range(after.size(0)):
        if before[i] > 0:
            after[i] = 1
    return cells
