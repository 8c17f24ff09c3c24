# Trap: `and` short-circuits. `counts[k]` is read only where out[k] != 0, so counts may be shorter
# than out; the mask form reads every row of counts and raises where the loop did not.
import torch


def mark_present(flags: torch.Tensor, counts: torch.Tensor) -> torch.Tensor:
    out = flags.clone()
    for k in range(out.size(0)):
        if out[k] != 0 and counts[k] > 0:
            out[k] = 2
    return out
