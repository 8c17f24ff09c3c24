# Integer pieces into an empty float32 start: the result stays float32 as before.
# bench: bucketize_rows(x=float32[n,4])
import torch


def bucketize_rows(x):
    codes = torch.empty(0, 4)
    for row in x:
        codes = torch.cat([codes, (row > 0).long().unsqueeze(0)])
    return codes
