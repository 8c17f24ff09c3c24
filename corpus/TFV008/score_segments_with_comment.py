# Float parts: the ids come out in the scores' dtype, and the comment on the line is kept.
import torch


def segment_of_each_score(scores_per_class):
    segments = torch.cat([torch.full_like(s, c) for c, s in enumerate(scores_per_class)])  # class of each score
    return segments
