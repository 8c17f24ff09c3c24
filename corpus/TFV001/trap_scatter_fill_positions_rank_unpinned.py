# One number stored at a position read from each token, but nothing pins the tokens' rank: a
# token that is itself a block of positions (empty ones included) writes a block, which one
# `arange` against the tokens does not reproduce. The checker finds such an input: untouched.
import torch


def mark_tokens(table: torch.Tensor, sentences):
    for row, tokens in enumerate(sentences):
        for col, token in enumerate(tokens):
            table[col, row, token] = 1
    return table
