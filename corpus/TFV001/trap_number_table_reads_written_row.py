# Each row starts from the row the previous step wrote (a recurrence through the table), though
# the rest of the value is Python math. Must stay.
import math

import torch


def damped(length):
    table = torch.zeros(length)
    for p in range(1, length):
        table[p] = table[p - 1] * 0.5 + math.sin(p)
    return table
