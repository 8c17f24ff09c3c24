# Trap: the fill reads row 0, and the loop writes row 0 at its first step: every later row gets
# the doubled value doubled again. One broadcast store would double it once.
import torch


def repeat_doubling(w: torch.Tensor) -> None:
    for c in range(0, w.size(0)):
        w[c, 0] = w[0, 0] * 2
