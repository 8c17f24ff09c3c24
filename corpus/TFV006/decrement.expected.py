# Releasing slots: `-= 1` becomes an accumulation of -1.
# bench: release(freed=index64[n]<8>)
import torch


def release(freed: torch.Tensor) -> torch.Tensor:
    freed = freed.flatten()
    load = torch.full((8,), 100, dtype=torch.long)
    load.index_put_((freed.long(),), load.new_full((), -1), accumulate=True)
    return load
