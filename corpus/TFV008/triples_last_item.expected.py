# The query index of each match, where every match is a triple and the ids come from the last
# item: only that item is filled.
import torch


def query_of_each_match(matches):
    query_ids_parts = [idx for _, _, idx in matches]
    query_ids = torch.cat(query_ids_parts)
    query_ids = torch.arange(len(query_ids_parts), device=query_ids.device).repeat_interleave(
        torch.tensor([len(part) for part in query_ids_parts], device=query_ids.device), output_size=len(query_ids),
    ).view(-1, *[1] * (query_ids.dim() - 1)).expand_as(query_ids).to(query_ids.dtype, copy=True)
    keys = torch.cat([idx for (_, _, idx) in matches])
    return query_ids, keys
