# `import torch as th`, no dim argument at all.
# bench: squares(x=float32[n,4])
import torch as th


def squares(x):
    result = th.empty(0, 4)
    result_parts = []
    for row in x:
        result_parts.append((row * row).unsqueeze(0))
    result = th.cat([result, *result_parts])
    return result
