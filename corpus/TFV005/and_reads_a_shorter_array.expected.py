# `and` asks its right side only where its left side holds: `align` may be shorter than the loop
# runs, as long as no position past its end passes the first test. The rewrite narrows the
# selected positions test by test and reads `align` only at the positions left.
# bench: copy_where_unset(target=int64[n], align=int64[n], offset=int)
import torch


def copy_where_unset(target: torch.Tensor, align: torch.Tensor, offset: int) -> torch.Tensor:
    target = target.view(-1)
    align = align.view(-1)
    out = target.clone()
    out_rows = (out == 0).nonzero().squeeze(1)
    if out_rows.numel() > 0:
        out_rows = out_rows[align[out_rows] != 0]
    if out_rows.numel() > 0:
        out[out_rows] = (align[out_rows] + offset).to(out.dtype)
    return out
