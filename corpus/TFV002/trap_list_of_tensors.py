# Trap: `losses` is a Python list of tensors of different shapes (ragged); it has no .tolist().
import torch


def losses_as_floats(losses):
    return [l.item() for l in losses]


def collect(batches):
    losses = [torch.zeros(()) + len(b) for b in batches]
    return losses_as_floats(losses)
