# Marking seen positions: a constant assignment, so repeated indices are harmless.
# bench: seen_mask(idx=index64[n]<32>)
import torch


def seen_mask(idx: torch.Tensor) -> torch.Tensor:
    mask = torch.zeros(32, dtype=torch.bool)
    mask[idx.long()] = True
    return mask
