# The fills are made float32 whatever the parts are: the ids come out float32, cast once.
import torch


def float_ids(parts):
    ids_parts = [p for p in parts]
    ids = torch.cat(ids_parts)
    ids = torch.arange(len(ids_parts), device=ids.device).repeat_interleave(
        torch.tensor([len(part) for part in ids_parts], device=ids.device), output_size=len(ids),
    ).view(-1, *[1] * (ids.dim() - 1)).expand_as(ids).to(torch.float32, copy=True)
    return ids
