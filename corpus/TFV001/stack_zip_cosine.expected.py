# Per-pair cosine similarity over zip(a, b) with F.cosine_similarity along the sample's dim.
# bench: pair_cosine(a=float32[n,16], b=float32[n,16])
import torch
import torch.nn.functional as F


def pair_cosine(a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
    return torch.stack([F.cosine_similarity(u, v, dim=0) for u, v in zip(a, b)])
