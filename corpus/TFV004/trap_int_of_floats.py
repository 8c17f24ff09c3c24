# Trap: int() of float elements has no faithful int64 form: int(1e20) is exact in Python,
# .long() overflows. The checker must reject the rewrite (it prints the counterexample).
import torch


def truncated_total(x: torch.Tensor) -> int:
    count = 0
    for v in x:
        count += int(v)
    return count
