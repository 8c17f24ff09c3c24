# Per-channel mean and standard deviation summed over the batches a loader yields: `load` may
# give a tensor or a NumPy array, so the batched form reduces with one call both spell alike
# (dimensions passed positionally), and the accumulators, made before the outer loop, are
# written at the three channels the loop writes. One reduction over three axes adds each
# channel's numbers in another order than the per-channel ones: compared within the tolerance of
# a reordered float reduction, and where NaN, inf and -inf meet it signals NumPy's invalid value
# at `inf - inf` where the loop met the NaN first, which is that order too, not a difference.
# A NumPy batch is made a tensor on the accumulator's device before it is added: torch adds an
# ndarray into a CPU tensor but raises for a GPU one, where the loop added NumPy scalars (a GPU
# check found it). (Known gap: float32 data near its limits can overflow in one order and not
# the other; the search finds that only where it draws such data.)
import torch


def channel_stats(loader, count):
    mean = torch.zeros(3)
    std = torch.zeros(3)
    for _ in range(count):
        images = loader.load()
        mean[:3] += torch.as_tensor(images[:, :3, :, :].mean((0, *range(2, images.ndim))), device=mean.device)
        std[:3] += torch.as_tensor(images[:, :3, :, :].std((0, *range(2, images.ndim))), device=std.device)
    return mean / count, std / count
