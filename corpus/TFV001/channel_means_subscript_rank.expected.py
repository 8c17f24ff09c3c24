# Per-channel means of a batch of images: `images[:, c, :, :]` says each channel has at least
# three dimensions but not how many, so each one is flattened and reduced at once.
import torch


def channel_means(images: torch.Tensor) -> torch.Tensor:
    means = torch.zeros(3)
    means[:] = images[:, :3, :, :].movedim(1, 0).flatten(1).mean(1)
    return means
