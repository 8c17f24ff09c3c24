# Must not change: `w` is the module's own float32 parameter (`.float()` of a float32 tensor is
# the tensor itself), and `model.half()` converts it in place. The loop then divides float16
# numbers one at a time into a float64 total; summed in float16 first, the batch overflows.
import torch


def third_total(model):
    w = model.scale.float()
    model.half()
    total = torch.zeros((), dtype=torch.float64)
    for i in range(w.shape[0]):
        total += w[i] / 3.0
    return total
