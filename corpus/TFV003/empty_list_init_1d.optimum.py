# Hand-written optimum for empty_list_init_1d.py: each element repeated 3 times in one call.
import torch


def upsample(x):
    return x.repeat_interleave(3)
