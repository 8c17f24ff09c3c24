# `Block.__init__` builds `self.act` as a ReLU, which treats the rows of a batch alike; the
# subclass in the same module replaces it with a softmax over dimension 0 -- over the rows once
# batched. The layer is not rebuilt from `Block.__init__` for the checker: it is opaque, and the
# batched form is offered as unverified only.
import torch
from torch import nn


class Block(nn.Module):
    def __init__(self):
        super().__init__()
        self.act = nn.ReLU()

    def forward(self, x):
        return torch.stack([self.act(x[i]) for i in range(len(x))])


class SoftBlock(Block):
    def __init__(self):
        super().__init__()
        self.act = nn.Softmax(dim=0)
