# bench: make_encodings(dim=int[32], max_len=int[n])
# Position encodings into a legacy `torch.FloatTensor(...).fill_(0)`, frequencies outside, positions
# inside, a size printed in between: the parity test is the outer index's, one branch per column.
import math

import torch


def make_encodings(dim, max_len):
    enc = torch.FloatTensor(max_len, 1, dim).fill_(0)
    print(enc.size())
    phase = torch.arange(max_len, device=enc.device, dtype=torch.float64) / (10000.0 ** (2.0 * torch.arange(dim, device=enc.device, dtype=torch.float64) / float(dim)))[:, None]
    enc[:max_len, 0, :dim] = torch.where((torch.arange(dim, device=enc.device, dtype=torch.float64) % 2 == 1)[:, None], torch.cos(phase), torch.sin(phase)).movedim(0, 1)
    return enc
