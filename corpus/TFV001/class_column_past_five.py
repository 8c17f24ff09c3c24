# Detection targets hold (x1, y1, x2, y2, score, class) per row: the score of each row counts only
# for the class asked about. Column 5 lies past the sizes the checker used to draw (0-5), which
# left such loops unverified; it now draws rows of six columns and more, and runs its edge sweep
# at those sizes too. `rows, cols = targets.shape` pins a matrix: a (rows, 6, 1) `targets` would
# store each (1,) product into a one-number slot, which a batch of them cannot (the checker draws
# it, with the sizes of one kept beside the wide ones).
# bench: class_scores(targets=float32[n,6], cls=int)
import torch


def class_scores(targets: torch.Tensor, cls: int) -> torch.Tensor:
    rows, cols = targets.shape
    scores = torch.zeros(rows)
    for i in range(rows):
        scores[i] = targets[i, 4] * (targets[i, 5] == cls)
    return scores
