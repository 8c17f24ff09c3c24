# The kept entries summed into a total that starts as a Python float (it was a trap of TFV005, "no faithful
# form"): the mask of kept samples is flattened (`if keep[i]:` takes the one element of each sample, whatever
# its rank), and the batched sum runs only when some sample is kept, so `total` stays the float 0.0 otherwise.
# bench: kept_total(v=float32[n], keep=bool[n])
import torch


def kept_total(v: torch.Tensor, keep: torch.Tensor):
    total = 0.0
    for i in range(len(v)):
        if keep[i]:
            total += v[i]
    return total
