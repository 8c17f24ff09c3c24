# Must stay: the mean absolute deviation of each slice `x[:, j, :]`, with nothing pinning the
# rank of `x`. Written for a 3-D `x`, the batched form reduces over (0, 2) and broadcasts the
# means back as `[:, None, None]`; a 4-D `x` (which `x[:, j, :]` reads just as well) lines them
# up with the wrong axis. The checker draws `x` one rank past what the rung assumed, and
# refutes it.
import torch


def slice_deviation(x, n: int):
    out = torch.zeros(n)
    for j in range(n):
        out[j] = (x[:, j, :] - x[:, j, :].mean()).abs().mean()
    return out
