# Trap: `keep(*pair)` stores a view of `cells` on the object (the arguments travel in a tuple):
# `before[i]` is `after[i - 1]`, which the step before wrote.
import torch


def keep(holder, values):
    holder.before = values


class Fill:
    def run(self, cells: torch.Tensor):
        cells = cells.view(-1)
        pair = (self, cells[:-1])
        keep(*pair)
        before = self.before.view(-1)
        after = cells[1:]
        for i in range(after.size(0)):
            if before[i] > 0:
                after[i] = 1
        return cells
