# Trap: beam-search bookkeeping keeps each step's flags in a tuple grown with `+`: `prev` is a
# view of `flags` one element behind `nxt`, so a finished step makes every later one finished.
import torch


def sticky(flags: torch.Tensor):
    flags = flags.view(-1)
    history = ()
    history = history + (flags[:-1],)
    prev: torch.Tensor = history[-1]
    nxt = flags[1:]
    for i in range(nxt.size(0)):
        if prev[i] > 0:
            nxt[i] = 1
    return flags
