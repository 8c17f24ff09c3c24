# bench: make_encodings(dim=int[32], max_len=int[n])
# Position encodings into a legacy `torch.FloatTensor(...).fill_(0)`, frequencies outside, positions
# inside, a size printed in between: the parity test is the outer index's, one branch per column.
import math

import torch


def make_encodings(dim, max_len):
    enc = torch.FloatTensor(max_len, 1, dim).fill_(0)
    print(enc.size())
    for i in range(dim):
        for j in range(max_len):
            phase = float(j) / (10000.0 ** (2.0 * i / float(dim)))
            enc[j, 0, i] = math.cos(phase) if i % 2 == 1 else math.sin(phase)
    return enc
