# Each row's score weighted by its class, looked up in a table whose rank nothing pins. The batched
# lookup is wrong where the table is (classes, 1): each row's lookup is a (1,) weight that a
# one-number slot takes, where the batch of them is (n, 1) and broadcasts against the n scores
# into (n, n). The checker draws that table at six columns of targets and more, and refutes it.
import torch


def class_confidence(targets: torch.Tensor, class_weights: torch.Tensor) -> torch.Tensor:
    conf = torch.zeros(targets.size(0))
    for i in range(targets.size(0)):
        conf[i] = targets[i, 4] * class_weights[targets[i, 5].long()]
    return conf
