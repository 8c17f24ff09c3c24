# torch.tensor([...], dtype=...) carries its dtype over.
# bench: to_double(t=float32[n])
import torch as th


def to_double(t: th.Tensor) -> th.Tensor:
    return t.flatten().detach().to("cpu", th.float64, copy=True)
