# Must stay: nothing pins the rank of `x`. With an (n, 1) `x`, each `x[i] * 2` is a (1,) tensor
# that the loop stores into one number slot of `out`; the batch of them is (n, 1), which
# `out[:] = x[:n] * 2` cannot store into an (n,) `out`. The checker's sweep draws trailing sizes
# of one and refutes it.
import torch


def doubled(x: torch.Tensor, n: int) -> torch.Tensor:
    out = torch.zeros(n)
    for i in range(n):
        out[i] = x[i] * 2
    return out
