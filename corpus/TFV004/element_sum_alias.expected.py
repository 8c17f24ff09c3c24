# `import torch as th`, range(0, x.size(0)) and float(x[i]).
# bench: energy(x=float32[n])
import torch as th


def energy(x: th.Tensor):
    e = x.sum(dtype=th.float64).item()
    return e
