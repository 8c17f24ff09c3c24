# Hand-written optimum for stack_softmax.py: one softmax over the last dim of the whole batch, no vmap.
import torch
import torch.nn.functional as F


def row_softmax(logits: torch.Tensor) -> torch.Tensor:
    return F.softmax(logits, dim=-1)
