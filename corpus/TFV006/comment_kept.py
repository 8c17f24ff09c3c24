# Comments on and inside the loop are kept above the rewrite.
# bench: tally(idx=index64[n]<9>)
import torch


def tally(idx: torch.Tensor) -> torch.Tensor:
    idx = idx.view(-1)
    counts = torch.zeros(9)
    # count every index
    for i in range(len(idx)):
        counts[idx[i]] += 1  # duplicates count twice
    return counts
