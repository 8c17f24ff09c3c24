# Integer accumulator over `for v in x` with int(v): the result stays a Python int.
# bench: count_units(x=int64[n])
import torch


def count_units(x):
    if x.numel() == 0:
        return 0
    count = 0
    for v in x:
        count += int(v)
    return count
