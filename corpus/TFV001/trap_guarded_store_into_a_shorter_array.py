# The loop runs over every token of `ys`, but writes `scores[i]` only where the token is the end
# mark: `scores` may have fewer rows than `ys`, as long as no end mark sits past its last row. The
# batched `scores[:b][keep] = ...` needs as many rows as the mask, and raises there.
import torch


def mark_finished(scores: torch.Tensor, ys: torch.Tensor, eos: int, scale: float):
    b, = ys.shape
    for i in range(b):
        if ys[i] == eos:
            scores[i] = scores[i] * scale
    return scores
