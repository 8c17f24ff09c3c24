# An int start with float values: 0 when the loader is empty, a float otherwise; both kept.
import torch


def total_penalty(model, loader):
    penalty = 0
    for batch in loader:
        reg = model(batch)
        reg.backward()
        penalty += reg.detach().double()
    if isinstance(penalty, torch.Tensor):
        penalty = penalty.item()
    return penalty
