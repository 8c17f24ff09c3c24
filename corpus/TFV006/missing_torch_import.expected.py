# Only `from torch import Tensor` is bound: the one-hot rewrite needs torch.arange, so `import torch` is added.
# bench: encode(y=index64[n]<3>)
from torch import Tensor, zeros
import torch


def encode(y: Tensor) -> Tensor:
    y = y.view(-1)
    out: Tensor = zeros(len(y), 3)
    out[torch.arange(len(y)), y.long()] = 1
    return out
