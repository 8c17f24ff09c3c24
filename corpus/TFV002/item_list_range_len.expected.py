# Index form: x[i].item() over range(len(x)), `import torch as th`.
# bench: as_list(x=int64[n])
import torch as th


def as_list(x: th.Tensor) -> list:
    values = x.flatten().tolist()
    return values
