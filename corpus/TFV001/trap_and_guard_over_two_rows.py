# Must stay: `and` reads `x[0][i]` only where `x[-1][i] > t` holds. A batched test reads both
# rows for every sample, which raises where the first row is `None` or shorter than the loop;
# and `x` may be a list of rows, which the checker does not build.
import torch


def clear_crossings(scores: torch.Tensor, x, t: float) -> torch.Tensor:
    for i in range(scores.shape[0]):
        if x[-1][i] > t and x[0][i] < t:
            scores[i] = 0.0
    return scores
