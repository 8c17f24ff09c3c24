# The module imports only Tensor: the rewrite needs torch.where, so `import torch` is added.
# bench: sign_into(x=float32[n], y=float32[n])
from torch import Tensor
import torch


def sign_into(x: Tensor, y: Tensor) -> Tensor:
    x = x.view(-1)
    y = y.view(-1)
    y[:len(x)] = torch.where(x < 0, -1, 1)
    return y
