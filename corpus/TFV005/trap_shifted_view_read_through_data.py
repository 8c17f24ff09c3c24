# Trap: `prev` and `target_data` are views of one buffer, one element apart: `prev.data[i]` is
# `target_data[i - 1]`, which the step before wrote (a running count, not an element-wise copy).
import torch


def count_up(target):
    base = target.view(-1).clone()
    prev = base[:-1]
    target_data = base[1:]
    for i in range(target_data.size(0)):
        if prev.data[i] >= 0:
            target_data[i] = prev.data[i] + 1
    return base
