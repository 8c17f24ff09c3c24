# Hand-written optimum for two_pieces_trailing_comment.py: rows of a and b interleaved by one stack + reshape, float64 as the start.
import torch


def interleave(a, b):
    return torch.stack((a, b), dim=1).reshape(-1, a.shape[1]).double()
