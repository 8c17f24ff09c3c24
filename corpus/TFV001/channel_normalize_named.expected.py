# Per-channel normalisation with the statistics bound just before the loop.
import torch


def normalize(image: torch.Tensor) -> torch.Tensor:
    means = (0.5, 0.5, 0.5)
    stds = (0.25, 0.25, 0.25)
    image[:3].movedim(0, -1).sub_(image.new_tensor(means)[:len(image)]).div_(image.new_tensor(stds, dtype=torch.promote_types(image.dtype, torch.float32))[:len(image)])
    return image
