# The query index of each match, where every match is a triple and the ids come from the last
# item: only that item is filled.
import torch


def query_of_each_match(matches):
    query_ids = torch.cat([torch.full_like(idx, q) for q, (_, _, idx) in enumerate(matches)])
    keys = torch.cat([idx for (_, _, idx) in matches])
    return query_ids, keys
