# Must stay: `history` may be a list of lists of token ids. `len(history[-1])` and
# `history[-1][b] == eos` work on one, element by element; a batched test
# `(history[-1][:n] == eos)` would compare a whole list with a number (one `False`).
import torch


def block_finished(scores: torch.Tensor, history, eos: int) -> torch.Tensor:
    for b in range(len(history[-1])):
        if history[-1][b] == eos:
            scores[b] = -1e20
    return scores
