# Trap: `note` (one argument) keeps a view of `cells` in a module-level holder, one element
# behind `after`: the loop reads through it what the step before wrote.
import torch


class Box:
    pass


BOX = Box()


def note(values):
    BOX.before = values


def fill(cells: torch.Tensor):
    cells = cells.view(-1)
    note(cells[:-1])
    before: torch.Tensor = BOX.before
    after = cells[1:]
    for i in range(after.size(0)):
        if before[i] > 0:
            after[i] = 1
    return cells
