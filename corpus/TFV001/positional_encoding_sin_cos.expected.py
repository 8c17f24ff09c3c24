# bench: encodings(length=int[n], width=int[32])
# Sinusoidal position encodings filled one (position, frequency) pair at a time from Python math,
# through a temporary and a parity branch: computed in double as Python does, on the table's device.
import math

import torch


def encodings(length, width):
    table = torch.zeros(length, width)
    angle = torch.arange(length, device=table.device, dtype=torch.float64)[:, None] / (10000.0 ** (2.0 * torch.arange(width, device=table.device, dtype=torch.float64) / width))
    table[:, :width] = torch.where(torch.arange(width, device=table.device, dtype=torch.float64) % 2 == 0, torch.sin(angle), torch.cos(angle))
    return table
