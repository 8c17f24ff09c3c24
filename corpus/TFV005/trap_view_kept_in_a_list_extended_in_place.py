# Trap: `pieces += chunk` extends the list in place with a view of `flags` one element behind
# `nxt`: the loop reads back what the step before wrote.
import torch


def sticky(flags: torch.Tensor):
    flags = flags.view(-1)
    pieces = []
    chunk = [flags[:-1]]
    pieces += chunk
    prev: torch.Tensor = pieces[0]
    nxt = flags[1:]
    for i in range(nxt.size(0)):
        if prev[i] > 0:
            nxt[i] = 1
    return flags
