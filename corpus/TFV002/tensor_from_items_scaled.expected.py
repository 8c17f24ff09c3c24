# torch.tensor of Python floats: a tensor of the default float dtype on the default device, whatever
# the input's dtype and device; the list is rebuilt by the same call (a GPU check refuted `.cpu()`:
# the default device may be a GPU's, `torch.set_default_device("cuda")`).
# bench: halve(x=float32[n])
import torch


def halve(x: torch.Tensor) -> torch.Tensor:
    return torch.tensor((x.flatten() / 2).tolist())
