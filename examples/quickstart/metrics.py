"""Evaluation helpers written one element at a time, as legacy PyTorch code often is.

torchfix's quick-start example (README: "Quick start"): most of these loops become one
vectorized expression, verified equivalent first; two of them must not change, and torchfix
says why.
"""
import torch


def mean_loss(losses: torch.Tensor) -> float:
    # one .item() per step: a device sync each time on a GPU
    total = 0.0
    for i in range(len(losses)):
        total += losses[i].item()
    return total / max(len(losses), 1)


def confusion(targets: torch.Tensor, preds: torch.Tensor, num_classes: int) -> torch.Tensor:
    # one class per sample: without these two lines `targets[k]` could be a row of classes,
    # which the loop counts once each, and torchfix rejects the rewrite with that counterexample
    targets = targets.view(-1)
    preds = preds.view(-1)
    matrix = torch.zeros(num_classes, num_classes, dtype=torch.long)
    for k in range(targets.size(0)):
        matrix[targets[k], preds[k]] += 1
    return matrix


def clip_negative(x: torch.Tensor) -> torch.Tensor:
    out = torch.empty_like(x)
    for i in range(x.size(0)):
        if x[i] > 0:
            out[i] = x[i]
        else:
            out[i] = 0
    return out


def squared_errors(pred: torch.Tensor, target: torch.Tensor) -> torch.Tensor:
    return torch.stack([(pred[i] - target[i]) ** 2 for i in range(len(pred))])


def kept_scores(scores: torch.Tensor) -> torch.Tensor:
    kept = torch.empty(0)
    for s in scores:
        kept = torch.cat([kept, s.unsqueeze(0)])
    return kept


def above(x: torch.Tensor, t: torch.Tensor) -> torch.Tensor:
    # looks batchable, but when x is 1-D each row is a number and `row > t` compares it with all
    # of t: the checker finds that input and the rewrite is rejected
    masks = []
    for row in x:
        masks.append(row > t)
    return torch.stack(masks)


def smooth_in_place(x: torch.Tensor) -> torch.Tensor:
    # each step reads the value the step before wrote: not element-wise, left alone
    for i in range(1, x.size(0)):
        x[i] = 0.5 * (x[i] + x[i - 1])
    return x
