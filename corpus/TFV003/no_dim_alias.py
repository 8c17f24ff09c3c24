# `import torch as th`, no dim argument at all.
# bench: squares(x=float32[n,4])
import torch as th


def squares(x):
    result = th.empty(0, 4)
    for row in x:
        result = th.cat([result, (row * row).unsqueeze(0)])
    return result
