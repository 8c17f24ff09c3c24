# A while loop drawing random batches until enough samples are kept.
import torch


def sample_until(n_wanted, dim):
    kept = torch.empty(0, dim)
    drawn = 0
    kept_parts = []
    while drawn < n_wanted:
        batch = torch.randn(8, dim)
        mask = batch.norm(dim=1) < 2.0
        kept_parts.append(batch[mask])
        drawn += 8
    kept = torch.cat([kept, *kept_parts], dim=0)
    return kept
