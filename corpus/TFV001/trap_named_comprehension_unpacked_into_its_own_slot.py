# Trap: the line that stacks the list unpacks into an element of that same list (`scores[0], order = ...`), writing into the list the comprehension built: the list is still used after it is stacked.
import torch


def ranked(x: torch.Tensor):
    scores = [(x[i] * x[i]).sum() for i in range(x.size(0))]
    scores[0], order = torch.stack(scores, 0).sort(0, descending=True)
    return scores, order
