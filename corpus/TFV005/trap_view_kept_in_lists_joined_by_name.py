# Trap: two lists joined by name (`kept + extra`) hold the view of `flags` one element behind
# `nxt` that `kept` holds: the loop reads back what the step before wrote.
import torch


def sticky(flags: torch.Tensor):
    flags = flags.view(-1)
    kept = [flags[:-1]]
    extra = []
    joined = kept + extra
    prev: torch.Tensor = joined[0]
    nxt = flags[1:]
    for i in range(nxt.size(0)):
        if prev[i] > 0:
            nxt[i] = 1
    return flags
