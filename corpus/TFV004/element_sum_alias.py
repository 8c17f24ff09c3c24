# `import torch as th`, range(0, x.size(0)) and float(x[i]).
# bench: energy(x=float32[n])
import torch as th


def energy(x: th.Tensor):
    e = 0.0
    for i in range(0, x.size(0)):
        e += float(x[i])
    return e
