# Trap: each step stores a sum plus an offset whose rank nothing pins, so a step's value is not one
# number: an offset of several elements fills each slot element by element, which no store of one
# batch does for every rank the old code accepts. It must stay.
import torch


def shifted_coverage(scores, cutoffs, offset):
    hits = torch.zeros_like(cutoffs)
    for k, c in enumerate(cutoffs):
        hits[k] = (scores > c).sum() + offset
    return hits
