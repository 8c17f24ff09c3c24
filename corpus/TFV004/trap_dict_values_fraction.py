# Trap: a dict of per-class counts (Python ints); the sum over `.values()` feeds a division, and `(count > 0).long()` does not exist on a Python bool.
import torch


def covered_fraction(counts_by_class):
    covered = 0
    for count in counts_by_class.values():
        covered += int(count > 0)
    return covered / len(counts_by_class)
