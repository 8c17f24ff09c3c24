# Trap: `table[idx[i]]` looks up one entry per sample, but nothing shows `table` is an array:
# a list of tensors is indexed one position at a time, and `table[idx]` would raise.
import torch


def embed_rows(table, idx):
    rows = []
    for i in range(len(idx)):
        rows.append(table[idx[i]])
    return torch.stack(rows)
