# Mean absolute difference per sample between predictions and targets (L1 per sample).
# bench: l1_per_sample(pred=float32[n,32], target=float32[n,32])
import torch


def l1_per_sample(pred: torch.Tensor, target: torch.Tensor) -> torch.Tensor:
    n, d = pred.shape
    losses = torch.empty(n)
    for i in range(n):
        losses[i] = (pred[i] - target[i]).abs().mean()
    return losses
