# Trap: `operator.add` of two tuples holds the view of `flags` one element behind `nxt`: the
# loop reads back what the step before wrote.
import operator

import torch


def sticky(flags: torch.Tensor):
    flags = flags.view(-1)
    kept = (flags[:-1],)
    joined = operator.add(tuple(kept), ())
    prev: torch.Tensor = joined[0]
    nxt = flags[1:]
    for i in range(nxt.size(0)):
        if prev[i] > 0:
            nxt[i] = 1
    return flags
