# Detection targets hold (x1, y1, x2, y2, score, class) per row: the confidence of each row reads
# the score and the class column. Column 5 lies past the sizes the checker used to draw (0-5),
# which left such loops unverified; it now draws rows of six columns and more, and runs its edge
# sweep at those sizes too.
# bench: class_confidence(targets=float32[n,6], class_weights=float32[80])
import torch


def class_confidence(targets: torch.Tensor, class_weights: torch.Tensor) -> torch.Tensor:
    conf = torch.zeros(targets.size(0))
    conf[:] = targets[:, 4] * class_weights[targets[:, 5].long()]
    return conf
