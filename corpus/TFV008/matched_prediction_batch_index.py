# The batch index of each matched prediction, DETR-style: every pair's source indices filled
# with the pair's position, then concatenated.
import torch


def source_batch_index(indices):
    batch_idx = torch.cat([torch.full_like(src, i) for i, (src, _) in enumerate(indices)])
    return batch_idx
