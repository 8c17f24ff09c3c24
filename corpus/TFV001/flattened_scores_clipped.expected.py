# The scores come in of any rank and the function flattens them first: from that line on they are 1-D,
# which the lift and the checker both read from the code, with no annotation needed for the guard.
# bench: clip_negatives(scores=float32[n])
import torch


def clip_negatives(scores):
    scores = scores.view(-1)
    keep = scores < 0
    if keep.any():
        scores[keep] = 0
    return scores
