# A store under a trailing `if`: only the rows where the test holds are written (a mask).
import torch


def remap_unknown(pairs: torch.Tensor, offset: int) -> torch.Tensor:
    target = pairs[:, 0].clone()
    copy_ids = pairs[:, 1]
    for k in range(target.size(0)):
        if target[k] == 0 and copy_ids[k] != 0:
            target[k] = copy_ids[k] + offset
    return target
