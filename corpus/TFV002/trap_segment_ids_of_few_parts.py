# Trap: the batch index of DETR-style matches, one fill per image. Its batched form (the parts'
# cat and one repeat_interleave of their positions) is slower below about 30 parts on a CPU and
# copies the lengths to a GPU through a stream sync, where the fills are launched without one:
# benchmarks/bench_segment_ids.py measures it. A list with one part per image must stay as it is.
import torch


def source_batch_index(indices):
    batch_idx = torch.cat([torch.full_like(src, i) for i, (src, _) in enumerate(indices)])
    src_idx = torch.cat([src for (src, _) in indices])
    return batch_idx, src_idx
