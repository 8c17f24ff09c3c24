# Trap: `labels[i]` picks one column per row only if the labels are integers. Nothing here shows
# that: a list of bools indexes `scores[i, True]` as a new dimension, and the batched
# `scores[torch.arange(n), labels]` would take the bools as a mask. The loop stays.
import torch


def picked_sum(scores, labels):
    total = 0
    for i in range(len(labels)):
        total = total + scores[i, labels[i]]
    return total
