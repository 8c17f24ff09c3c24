# Releasing slots: `-= 1` becomes an accumulation of -1.
# bench: release(freed=index64[n]<8>)
import torch


def release(freed: torch.Tensor) -> torch.Tensor:
    freed = freed.flatten()
    load = torch.full((8,), 100, dtype=torch.long)
    for i in range(len(freed)):
        load[freed[i]] -= 1
    return load
