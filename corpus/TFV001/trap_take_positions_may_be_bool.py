# Trap: `table[labels[i]]` looks up one row per sample only if the labels are integers; nothing
# here shows it, and a bool label indexes `table[True]` as a new dimension where the batched
# `table[labels]` would take the bools as a mask. The loop stays.
import torch


def looked_up(table: torch.Tensor, labels: torch.Tensor) -> torch.Tensor:
    rows = []
    for i in range(len(labels)):
        rows.append(table[labels[i]])
    return torch.stack(rows)
