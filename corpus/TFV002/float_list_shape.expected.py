# float(x[i]) over range(x.shape[0]): Python floats whatever the dtype.
# bench: to_floats(x=int64[n])
import torch


def to_floats(x: torch.Tensor) -> list:
    return x.flatten().double().tolist()
