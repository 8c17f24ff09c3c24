# Trap: the loop stops at the first negative element; the sum depends on the order.
import torch


def prefix_total(x: torch.Tensor) -> float:
    total = 0.0
    for i in range(len(x)):
        if x[i] < 0:
            break
        total += x[i].item()
    return total
