# The batch index of each matched target: the pair's second tensor this time, in a method.
import torch


class Matcher:
    def target_batch_index(self, indices):
        # permute targets following indices
        batch_idx = torch.cat([torch.full_like(tgt, i) for i, (_, tgt) in enumerate(indices)])
        tgt_idx = torch.cat([tgt for (_, tgt) in indices])
        return batch_idx, tgt_idx
