# Trap: the scale of each channel is a row of a tensor, not a number: `row` may have any shape
# that broadcasts against a channel, and the chain's batched form would not know where to put
# its dimensions. The loop stays.
import torch


def rescale(image: torch.Tensor, scales: torch.Tensor) -> torch.Tensor:
    for plane, row in zip(image, scales):
        plane.mul_(row)
    return image
