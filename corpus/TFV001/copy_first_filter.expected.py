# Every output channel of an upsampling kernel gets channel 0's filter: one broadcast store.
# The loop starts at 1 and reads row 0, which an empty kernel does not have, so the batched
# store runs only when the loop would have run.
import torch


def tie_filters(layer: torch.nn.ConvTranspose2d) -> None:
    w = layer.weight.data
    if w.size(0) > 1:
        w[1:, 0, :, :] = w[0, 0, :, :]
