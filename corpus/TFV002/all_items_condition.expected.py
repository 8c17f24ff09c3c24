# all() over comparisons of converted elements.
# bench: all_small(x=float32[n])
import torch


def all_small(x: torch.Tensor) -> bool:
    return all(abs(v) < 10 for v in x.flatten().tolist())
