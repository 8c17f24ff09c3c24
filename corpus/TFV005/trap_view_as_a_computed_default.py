# Trap: the default of `before` is a view of the module's buffer one element behind `after`:
# a call that passes nothing reads what the step before wrote.
import torch

BOARD = torch.zeros(6)


def fill(before: torch.Tensor = BOARD[:-1]):
    after = BOARD[1:]
    for i in range(after.size(0)):
        if before[i] > 0:
            after[i] = 1
    return BOARD
