# Trap: nothing shows that `rows` is an array -- a list of numbers or of 0-d tensors indexes like
# one, but `rows * 2` repeats a list instead of doubling it. The loop stays.
import torch


def doubled_rows(rows):
    out = torch.zeros(len(rows))
    for i in range(len(rows)):
        out[i] = rows[i] * 2
    return out
