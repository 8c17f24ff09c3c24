# A stack of layer outputs split into one-row chunks, each squeezed and appended to a list that
# already holds the first entry: the list is extended by the rows at once. `torch.chunk(x,
# x.size(0))` gives one-row views (and raises on an empty `x`), `.squeeze(0)` drops their length-one
# axis: they are the views `unbind` gives, refusing the same in-place writes under autograd.
# bench: layer_list(stacked=float32[n,8], embedded=float32[8])
import torch


def layer_list(stacked: torch.Tensor, embedded: torch.Tensor) -> list:
    layers = [embedded * 2]
    layers.extend(stacked.unbind(0))
    return layers
