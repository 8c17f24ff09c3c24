# The loop stops at the first padding index: the vectorized form would count past it.
import torch


def count_until_pad(tokens: torch.Tensor, pad: int) -> torch.Tensor:
    counts = torch.zeros(32)
    for i in range(len(tokens)):
        if tokens[i] == pad:
            break
        counts[tokens[i]] += 1
    return counts
