# Trap: the sum over a Python list of weight vectors is element-wise (a vector), not a sum to a scalar: converting the accumulator with float() after the loop would raise.
import torch


def blend(weight_vectors, logits):
    scales = torch.softmax(logits, dim=0)
    total = 0.0
    for w, s in zip(weight_vectors, scales):
        total += w * float(s)
    return total
