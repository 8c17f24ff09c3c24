# bench: encodings(length=int[n], width=int[32])
# Sinusoidal position encodings filled one (position, frequency) pair at a time from Python math,
# through a temporary and a parity branch: computed in double as Python does, on the table's device.
import math

import torch


def encodings(length, width):
    table = torch.zeros(length, width)
    for position in range(length):
        for k in range(width):
            angle = position / (10000.0 ** (2.0 * k / width))
            table[position, k] = math.sin(angle) if k % 2 == 0 else math.cos(angle)
    return table
