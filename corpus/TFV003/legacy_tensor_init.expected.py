# Legacy `torch.Tensor()` start (shape [0]) with torch.cat((out, y.unsqueeze(0))).
# bench: embed(x=float32[n,5])
import torch


def embed(x):
    out = torch.Tensor()
    out_parts = []
    for i in range(x.size(0)):
        y = x[i].tanh()
        out_parts.append(y.unsqueeze(0))
    out = torch.cat((out, *out_parts))
    return out
