# Trap: the hardest positive of each anchor, `.max()` of a boolean selection of its row. A masked `amax` of the
# batch (`masked_fill(~same, float("-inf")).amax(1)`) has the same values, but not the same gradients: where a
# row holds NaN, `.max()` sends the gradient to the NaN and `amax` makes it NaN everywhere in the row, and a NaN
# in an element the mask leaves out reaches the other elements' gradients through the fill (a sample with a NaN
# feature poisons the whole batch's gradients, where the loop kept them apart). It must stay.
import torch


def hardest_positive(x, labels):
    n = x.size(0)
    x = x.view(n, -1)
    dist = (x.unsqueeze(1) - x.unsqueeze(0)).pow(2).sum(2).sqrt()
    same = labels.expand(n, n).eq(labels.expand(n, n).t())
    hardest = []
    for i in range(n):
        hardest.append(dist[i][same[i]].max().unsqueeze(0))
    return torch.cat(hardest)
