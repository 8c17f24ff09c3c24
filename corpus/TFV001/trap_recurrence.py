# Trap: an RNN-style recurrence; each step reads the previous hidden state.
import torch


def run(W: torch.Tensor, x: torch.Tensor, h: torch.Tensor) -> torch.Tensor:
    out = torch.zeros(x.shape[0], h.shape[0])
    for i in range(x.shape[0]):
        h = torch.tanh(W @ h + x[i])
        out[i] = h
    return out
