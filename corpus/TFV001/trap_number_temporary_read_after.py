# The temporary of Python math is read after the loop (its last value): lifting it would leave a
# tensor where the code expects the last step's float. Must stay.
import math

import torch


def encodings_and_last(length, width):
    table = torch.zeros(length, width)
    for k in range(width):
        angle = 1.0 / (10000.0 ** (2.0 * k / width))
        table[0, k] = math.sin(angle)
    return table, angle
