# Mean absolute difference per sample between predictions and targets (L1 per sample).
# bench: l1_per_sample(pred=float32[n,32], target=float32[n,32])
import torch


def l1_per_sample(pred: torch.Tensor, target: torch.Tensor) -> torch.Tensor:
    n, d = pred.shape
    losses = torch.empty(n)
    if n > 0:
        losses[:] = torch.vmap(lambda predi, targeti: (predi - targeti).abs().mean())(pred, target[:n])
    return losses
