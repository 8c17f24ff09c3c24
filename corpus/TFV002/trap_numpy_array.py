# Trap: `arr` is a numpy array: its elements have .item() too, but arr.flatten().tolist() on a
# tensor-only rewrite would be guesswork; nothing shows it is a tensor.
import numpy as np
import torch


def as_floats(arr):
    return [a.item() for a in arr]


values = as_floats(np.arange(4.0))
