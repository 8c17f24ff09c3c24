# The batch index of each matched prediction, DETR-style: every pair's source indices filled
# with the pair's position, then concatenated.
import torch


def source_batch_index(indices):
    batch_idx_parts = [src for src, _ in indices]
    batch_idx = torch.cat(batch_idx_parts)
    batch_idx = torch.arange(len(batch_idx_parts), device=batch_idx.device).repeat_interleave(
        torch.tensor([len(part) for part in batch_idx_parts], device=batch_idx.device), output_size=len(batch_idx),
    ).view(-1, *[1] * (batch_idx.dim() - 1)).expand_as(batch_idx).to(batch_idx.dtype, copy=True)
    return batch_idx
