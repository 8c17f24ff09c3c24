# Integer accumulator over `for v in x` with int(...) of a comparison: the result stays a Python int.
# bench: count_positive_iter(x=float32[n])
import torch


def count_positive_iter(x):
    if x.numel() == 0:
        return 0
    count = 0
    for v in x:
        count += int(v > 0)
    return count
