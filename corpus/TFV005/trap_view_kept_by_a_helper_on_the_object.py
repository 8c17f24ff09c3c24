# Trap: `stash` keeps a view of `row` on the object, one element behind `ahead`: what the loop
# reads through `self.behind[i]` is `ahead[i - 1]`, which the step before wrote.
import torch


def stash(holder, values):
    holder.behind = values


class Flood:
    def spread(self, row: torch.Tensor):
        row = row.view(-1)
        stash(self, row[:-1])
        behind = self.behind.view(-1)
        ahead = row[1:]
        for i in range(ahead.size(0)):
            if behind[i] > 0:
                ahead[i] = 1
        return row
