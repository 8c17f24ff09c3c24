# A store under a trailing `if`: only the rows where the test holds are written (a mask).
import torch


def remap_unknown(pairs: torch.Tensor, offset: int) -> torch.Tensor:
    target = pairs[:, 0].clone()
    copy_ids = pairs[:, 1]
    keep = (target == 0) & (copy_ids[:target.size(0)] != 0)
    target[keep] = (copy_ids[:target.size(0)][keep] + offset).to(target.dtype)
    return target
