# Nothing pins the ranks of the cut-offs or the scores: each step stores one number (a whole-sample sum),
# so torch.vmap of the body, stored with the batch axis last, fills each slot whatever its rank.
# bench: coverage_at(scores=float32[512], cutoffs=float32[n], total=int)
import torch


def coverage_at(scores, cutoffs, total):
    hits = torch.zeros_like(cutoffs)
    for k, c in enumerate(cutoffs):
        hits[k] = (scores > c).sum() / float(total)
    return hits
