# The batch index of each matched target: the pair's second tensor this time, in a method.
import torch


class Matcher:
    def target_batch_index(self, indices):
        # permute targets following indices
        batch_idx_parts = [tgt for _, tgt in indices]
        batch_idx = torch.cat(batch_idx_parts)
        batch_idx = torch.arange(len(batch_idx_parts), device=batch_idx.device).repeat_interleave(
            torch.tensor([len(part) for part in batch_idx_parts], device=batch_idx.device), output_size=len(batch_idx),
        ).view(-1, *[1] * (batch_idx.dim() - 1)).expand_as(batch_idx).to(batch_idx.dtype, copy=True)
        tgt_idx = torch.cat([tgt for (_, tgt) in indices])
        return batch_idx, tgt_idx
