# Hand-written optimum for int_parts_float_start.py: the comparison converted to float32 once (the float32 start sets the dtype).
import torch


def bucketize_rows(x):
    return (x > 0).float()
