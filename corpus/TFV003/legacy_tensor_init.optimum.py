# Hand-written optimum for legacy_tensor_init.py: tanh of the whole batch; no rows at all keeps the legacy shape-[0] start.
import torch


def embed(x):
    if x.size(0) == 0:
        return torch.Tensor()  # nothing was concatenated onto the 1-D empty start
    return x.tanh()
