# `import torch as th` and range(idx.size(0)): the rewrite uses the alias the file binds.
# bench: token_counts(tokens=index64[n]<100>, vocab=int[100])
import torch as th


def token_counts(tokens: th.Tensor, vocab: int) -> th.Tensor:
    tokens = tokens.view(-1)
    freq = th.zeros(vocab, dtype=th.int32)
    freq.index_put_((tokens.long(),), freq.new_ones(()), accumulate=True)
    return freq
