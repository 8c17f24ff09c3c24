# Integer pieces into an empty float32 start: the result stays float32 as before.
# bench: bucketize_rows(x=float32[n,4])
import torch


def bucketize_rows(x):
    codes = torch.empty(0, 4)
    codes_parts = []
    for row in x:
        codes_parts.append((row > 0).long().unsqueeze(0))
    codes = torch.cat([codes, *codes_parts])
    return codes
