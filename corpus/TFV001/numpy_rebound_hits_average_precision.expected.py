# Average precision over the ranks of the relevant items: the ranks are rebound once (`np.argwhere`
# then `.flatten()`), the score starts as the int 0 before an early return, and a branch guards
# the division. Both the ranks' kind and the score's are what was bound before the loop.
import numpy as np


def average_precision(ranking, relevant):
    score = 0
    if len(relevant) == 0:
        return score
    hit = np.isin(ranking, relevant)
    ranks = np.argwhere(hit)
    ranks = ranks.flatten()
    found = len(ranks)
    if found > 0:
        step = 1.0 / found
        here = ((np.arange(found) + 1) * 1.0).astype(np.result_type(ranks, 0.0)) / (ranks + 1)
        before = np.where(ranks != 0, (np.arange(found) * 1.0).astype(np.result_type(ranks, 0.0)) / np.where(ranks != 0, ranks, np.ones_like(ranks)), 1.0)
        score += (step * (before + here) / 2).sum(0)
    return score
