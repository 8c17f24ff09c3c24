# One loop fills two lists, each stacked on its own line after the loop: both become one batched
# expression. Nothing pins the rank of `x`, so the reductions run over each flattened sample.
# bench: spread(x=float32[n,64], scale=0.5)
import torch


def spread(x, scale: float):
    centres = []
    peaks = []
    for i in range(x.size(0)):
        centres.append(x[i].mean() * scale)
        peaks.append(x[i].amax() - x[i].amin())
    centres = torch.stack(centres)
    peaks = torch.stack(peaks)
    return centres, peaks
