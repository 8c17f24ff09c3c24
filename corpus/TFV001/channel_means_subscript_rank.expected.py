# Per-channel means of a batch of images: `images[:, c, :, :]` says each channel has at least
# three dimensions but not how many, so the batch is reduced at once over every dimension but
# the channels' (`range(2, images.ndim)`: however many there are).
import torch


def channel_means(images: torch.Tensor) -> torch.Tensor:
    means = torch.zeros(3)
    means[:] = images[:, :3, :, :].mean((0, *range(2, images.ndim)))
    return means
