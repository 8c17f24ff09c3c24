# Comments on and inside the loop are kept above the rewrite.
# bench: tally(idx=index64[n]<9>)
import torch


def tally(idx: torch.Tensor) -> torch.Tensor:
    idx = idx.view(-1)
    counts = torch.zeros(9)
    # count every index
    # duplicates count twice
    counts.index_put_((idx.long(),), counts.new_ones(()), accumulate=True)
    return counts
