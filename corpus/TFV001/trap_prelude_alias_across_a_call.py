# Trap: `source` is the buffer that `window` views, and a call torchfix cannot see into stands
# between the two lines, so the replayed prelude stops there. The loop reads, through `source`,
# positions it wrote at earlier steps through `window`; drawn as two independent inputs, the
# checker would never see that. Such names refuse the rewrite.
import torch


def mirror_add(y: torch.Tensor, log) -> torch.Tensor:
    history = torch.zeros(y.numel())
    source = history
    log("mirroring")
    window = history.view(-1)
    flat = y.flatten()
    for i in range(len(flat)):
        window[i] = source[len(flat) - 1 - i] + flat[i]
    return window
