# Per anchor: the total distance to its own label (a boolean mask of each row) and to the other labels (the
# complement), declared as a pair of lists, appended one number at a time and concatenated. A whole sum of
# each row's selection is the sum of the batch with the unselected entries filled with zero.
# bench: label_mass(x=float32[n,8], labels=int64[n])
import torch


def label_mass(x, labels):
    n = x.size(0)
    x = x.view(n, -1)
    dist = (x.unsqueeze(1) - x.unsqueeze(0)).pow(2).sum(2).sqrt()
    same = labels.expand(n, n).eq(labels.expand(n, n).t())
    own = dist[:n].masked_fill(~same[:n], 0).sum(1)
    other = dist[:n].masked_fill(same[:n] != 0, 0).sum(1)
    return own, other
