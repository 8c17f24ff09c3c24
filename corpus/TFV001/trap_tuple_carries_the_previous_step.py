# Trap: `prev, cur = cur, x[t]` binds `prev` to what the step before bound to `cur` -- a value carried from
# one step to the next, not a pair of per-step values. The differences must stay a loop (or become a
# `diff`, which this rule does not write).
import torch


def steps_taken(x: torch.Tensor):
    cur = x[0]
    out = torch.zeros(len(x))
    for t in range(len(x)):
        prev, cur = cur, x[t]
        out[t] = cur - prev
    return out
