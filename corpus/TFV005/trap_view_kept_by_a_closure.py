# Trap: the nested `remember` keeps a view of `cells` on the object, one element behind
# `after`: the loop reads through `self.before[i]` what the step before wrote into `after`.
import torch


class Fill:
    def run(self, cells: torch.Tensor):
        cells = cells.view(-1)

        def remember(values):
            self.before = values

        remember(cells[:-1])
        before = self.before.view(-1)
        after = cells[1:]
        for i in range(after.size(0)):
            if before[i] > 0:
                after[i] = 1
        return cells
