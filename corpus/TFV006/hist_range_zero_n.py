# range(0, n) is the same loop as range(n).
# bench: prefix_counts(codes=index64[n]<12>, n=int[n])
import torch


def prefix_counts(codes: torch.Tensor, n: int) -> torch.Tensor:
    codes = codes.reshape(-1)
    counts = torch.zeros(12, dtype=torch.long)
    for i in range(0, n):
        counts[codes[i]] += 1
    return counts
