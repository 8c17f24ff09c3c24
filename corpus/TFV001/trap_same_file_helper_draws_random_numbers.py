# Must stay: the helper adds noise drawn per call. Mapped over the batch, the draws would come in
# another order (and vmap refuses randomness anyway): a helper that draws is not pure.
import torch


def jitter(box):
    return box + 0.01 * torch.randn_like(box)


def jittered(boxes: torch.Tensor):
    n, _ = boxes.shape
    return torch.stack([jitter(boxes[i]) for i in range(n)])
