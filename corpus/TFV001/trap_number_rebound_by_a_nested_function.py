# `n = 2` is the only binding of `n` in `weighted_sums`, but the nested `use_scale` rebinds it
# through `nonlocal`: after the call `n` may hold a tensor of any rank. Drawn as the int its one
# binding says, `* n` looked like a Python number and the batched form changed the shape.
import torch


def weighted_sums(x, scale):
    n = 2

    def use_scale():
        nonlocal n
        n = scale

    use_scale()
    return torch.stack([x[i].sum() * n for i in range(len(x))])
