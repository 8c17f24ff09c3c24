# Trap: an exception inside the loop is handled in the same function, which reads the total.
import torch


def robust_sum(model, loader):
    total = 0.0
    try:
        for batch in loader:
            loss = model(batch)
            if torch.isnan(loss):
                raise ValueError("nan loss")
            total += loss.item()
    except ValueError:
        return total
    return total
