# Trap: how many scores clear each level. `scores.ge(levels[j])` compares with a 0-d tensor, which takes the
# dtype of `scores` first (float64 levels are rounded to float32, int64 ones wrap to int32); the batch of
# levels, `scores.ge(levels[:, None])`, is an array of its own dtype and is compared in the wider one. A
# level between two float32 values counts differently, so nothing that compares the whole batch at once is
# the loop: the checker refutes each candidate, and it must stay.
import torch


def level_counts(scores: torch.Tensor, levels: torch.Tensor):
    scores = scores.view(-1)
    counts = []
    for j in range(levels.size(0)):
        counts.append(scores.ge(levels[j]).sum())
    return torch.stack(counts)
