# Greedy suppression (NMS-style): whether a box suppresses others depends on what earlier steps wrote.
import torch


def greedy_keep(order: torch.Tensor, overlaps: torch.Tensor) -> torch.Tensor:
    suppressed = torch.zeros(len(order), dtype=torch.bool)
    for i in range(len(order)):
        suppressed[order[i]] |= overlaps[i].any() & ~suppressed[order[i]]
    return suppressed
