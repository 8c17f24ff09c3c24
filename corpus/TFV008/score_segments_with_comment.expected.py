# Float parts: the ids come out in the scores' dtype, and the comment on the line is kept.
import torch


def segment_of_each_score(scores_per_class):
    # class of each score
    segments_parts = [s for s in scores_per_class]
    segments = torch.cat(segments_parts)
    segments = torch.arange(len(segments_parts), device=segments.device).repeat_interleave(
        torch.tensor([len(part) for part in segments_parts], device=segments.device), output_size=len(segments),
    ).view(-1, *[1] * (segments.dim() - 1)).expand_as(segments).to(segments.dtype, copy=True)
    return segments
