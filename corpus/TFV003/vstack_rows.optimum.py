# Hand-written optimum for vstack_rows.py: every row normalised at once, no pieces at all.
import torch


def normalize_rows(x):
    return x / (x.norm(dim=1, keepdim=True) + 1e-6)
