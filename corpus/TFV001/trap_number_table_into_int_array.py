# Python math truncated into an integer table: libm and torch may round a sine one unit in the last
# place apart, and truncation would turn that into another integer. Must stay.
import math

import torch


def quantized(length, width):
    table = torch.zeros(length, width, dtype=torch.long)
    for p in range(length):
        for k in range(width):
            table[p, k] = math.sin(p / (k + 1.0)) * 1000
    return table
