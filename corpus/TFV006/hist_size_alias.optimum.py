# Hand-written optimum for hist_size_alias.py: torch.bincount, as int32 counts (tokens in [0, vocab), as the bench draws them).
import torch as th


def token_counts(tokens: th.Tensor, vocab: int) -> th.Tensor:
    return th.bincount(tokens, minlength=vocab).int()
