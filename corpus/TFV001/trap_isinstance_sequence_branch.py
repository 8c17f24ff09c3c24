# Trap: the parameter is annotated as a tensor, but the loop sits in the branch the code takes
# for sequences (`elif isinstance(item, (list, tuple))` after the tensor branch): there `item` is
# a list of tensors, which `item[:, a:b]` cannot slice. The code's own type test wins.
import torch


def chunk_time(batch: torch.Tensor, a: int, b: int) -> list:
    chunks = []
    for item in batch:
        if isinstance(item, torch.Tensor):
            piece = item[:, a:b]
        elif isinstance(item, (list, tuple)):
            piece = torch.zeros(len(item), b - a)
            for k in range(len(item)):
                piece[k] = item[k][a:b]
        chunks.append(piece)
    return chunks
