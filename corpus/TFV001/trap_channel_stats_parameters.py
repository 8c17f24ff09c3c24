# Trap: per-channel normalisation with the statistics passed in. No one-line batched form is
# faithful to every kind `mean` may hold: an item of a 2-D float64 `mean` is a row, which
# `t.sub_(row)` subtracts in double and rounds once, where a number is rounded to the channel's
# dtype first (a float32 1e20 minus a float64 1e20 is 2e12, minus a float32 one 0); and a
# generator cannot be cut to the channels `zip` reaches. Bind the numbers to a literal tuple
# to have the loop batched (channel_normalize_named.py).
import torch


def normalize(image: torch.Tensor, mean, std) -> torch.Tensor:
    image = image.clone()
    for t, m, s in zip(image, mean, std):
        t.sub_(m).div_(s)
    return image
