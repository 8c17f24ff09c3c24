# Legacy `torch.Tensor()` start (shape [0]) with torch.cat((out, y.unsqueeze(0))).
# bench: embed(x=float32[n,5])
import torch


def embed(x):
    out = torch.Tensor()
    for i in range(x.size(0)):
        y = x[i].tanh()
        out = torch.cat((out, y.unsqueeze(0)))
    return out
