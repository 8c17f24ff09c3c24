# Average precision over the ranks of the relevant items: the ranks are rebound once (`np.argwhere`
# then `.flatten()`), the score starts as the int 0 before an early return, and a branch guards
# the division. Both the ranks' kind and the score's are what was bound before the loop.
# `np.argwhere` is not replayed, so the ranks are drawn as any array, of any rank before
# `.flatten()`; the rung that runs only when the loop would run holds: the guarded division keeps
# its divisor from zero in the ranks' own dtype, and the score is one sum over the samples,
# compared within the tolerance of a reordered float reduction. Ranks holding NaN, inf and -inf
# make the batched sum meet `inf - inf` (NumPy's invalid value) where the loop met a NaN first:
# both scores are NaN, and for a reordered reduction that signal is not a difference. (This case
# was refuted by that signal while the search happened to draw such ranks, and verified when it
# did not: the verdict moved with the literals of torchfix's own modules.)
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
        score = score + (step * (before + here) / 2).sum(0)
    return score
