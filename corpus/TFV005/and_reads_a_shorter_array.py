# `and` asks its right side only where its left side holds: `align` may be shorter than the loop
# runs, as long as no position past its end passes the first test. The rewrite narrows the
# selected positions test by test and reads `align` only at the positions left.
# bench: copy_where_unset(target=int64[n], align=int64[n], offset=int)
import torch


def copy_where_unset(target: torch.Tensor, align: torch.Tensor, offset: int) -> torch.Tensor:
    target = target.view(-1)
    align = align.view(-1)
    out = target.clone()
    for i in range(out.size(0)):
        if out[i] == 0 and align[i] != 0:
            out[i] = align[i] + offset
    return out
