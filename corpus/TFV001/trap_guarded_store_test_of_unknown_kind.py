# Must stay: nothing shows what `eos` holds. A Python list makes `history[-1][b] == eos` the
# plain `False` of a tensor meeting a list (nothing is written) where the batched test fails, and
# an array with more dimensions than a sample broadcasts the batched test differently: the
# checker refutes the mask on such inputs.
import torch


def block_finished(scores: torch.Tensor, history, eos):
    for b in range(history[-1].size(0)):
        if history[-1][b] == eos:
            scores[b] = -1e20
    return scores
