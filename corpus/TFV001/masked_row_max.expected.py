# The hardest positive of each anchor: `.max()` of a boolean selection of its row. Filled with -inf where the
# mask leaves an element out, the batch's `amax` over the row has the same values, and the same gradients
# wherever the result is a number (a tie splits the gradient evenly in both; `.max(dim)` would give it to one
# element). A row whose selection holds NaN has no derivative, and `.max()` and `amax` send its gradient
# different ways: the checker compares gradients where the old code is differentiable. An empty selection
# makes `.max()` raise, where the new code may do anything.
# bench: hardest_positive(x=float32[n,8], labels=int64[n])
import torch


def hardest_positive(x, labels):
    n = x.size(0)
    x = x.view(n, -1)
    dist = (x.unsqueeze(1) - x.unsqueeze(0)).pow(2).sum(2).sqrt()
    same = labels.expand(n, n).eq(labels.expand(n, n).t())
    return dist[:n].masked_fill(~same[:n], float("-inf")).amax(1)
