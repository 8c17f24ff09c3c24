# A while loop drawing random batches until enough samples are kept.
import torch


def sample_until(n_wanted, dim):
    kept = torch.empty(0, dim)
    drawn = 0
    while drawn < n_wanted:
        batch = torch.randn(8, dim)
        mask = batch.norm(dim=1) < 2.0
        kept = torch.cat([kept, batch[mask]], dim=0)
        drawn += 8
    return kept
