# Hand-written optimum for tuple_positional_dim.py: the relu'd chunks concatenated are just relu(x).
import torch


def gather_chunks(x):
    return torch.relu(x)
