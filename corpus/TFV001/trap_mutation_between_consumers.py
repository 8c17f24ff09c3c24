# Trap: between the two lists' consumers the code updates `x` in place. The batched form of the
# second list would read the updated `x`; the loop read it before. It must stay.
import torch


def spread_then_shift(x: torch.Tensor):
    n, d = x.shape
    centres = []
    peaks = []
    for i in range(n):
        centres.append(x[i].mean())
        peaks.append(x[i].amax())
    centres = torch.stack(centres)
    x.sub_(centres[:, None])
    peaks = torch.stack(peaks)
    return centres, peaks
