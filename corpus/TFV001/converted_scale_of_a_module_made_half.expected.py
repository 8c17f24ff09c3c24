# A float16 parameter divided one number at a time into a float64 total: `w` is the module's
# own float32 parameter (`.float()` of a float32 tensor is the tensor itself), and `model.half()`
# converts it in place. Summed in float16 the batch would overflow; summed in the total's dtype,
# as each step adds, it does not (this was a trap while the batch summed in its own dtype).
import torch


def third_total(model):
    w = model.scale.float()
    model.half()
    total = torch.zeros((), dtype=torch.float64)
    total += (w / 3.0).sum(0, dtype=total.dtype)
    return total
