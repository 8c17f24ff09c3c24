# Average precision over the ranks of the relevant items: the ranks are rebound once (`np.argwhere`
# then `.flatten()`), the score starts as the int 0 before an early return, and a branch guards
# the division. Both the ranks' kind and the score's are what was bound before the loop.
# Refuted: `np.argwhere` is not replayed, so the ranks are drawn as any float array, of any
# rank before `.flatten()`; where they hold inf and -inf, the batched sum signals NumPy's invalid
# value where the loop's order of additions does not. (Only such data tells them apart, and not
# every example budget draws it.)
import numpy as np


def average_precision(ranking, relevant):
    score = 0
    if len(relevant) == 0:
        return score
    hit = np.isin(ranking, relevant)
    ranks = np.argwhere(hit)
    ranks = ranks.flatten()
    found = len(ranks)
    for k in range(found):
        step = 1.0 / found
        here = (k + 1) * 1.0 / (ranks[k] + 1)
        if ranks[k] != 0:
            before = k * 1.0 / ranks[k]
        else:
            before = 1.0
        score = score + step * (before + here) / 2
    return score
