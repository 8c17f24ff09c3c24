# Row-wise suffix minimum of a 2-D tensor, walked from the end with the next row.
# bench: suffix_min(costs=float32[n,8])
import torch


def suffix_min(costs: torch.Tensor) -> torch.Tensor:
    for r in range(costs.size(0) - 2, -1, -1):
        costs[r] = torch.min(costs[r], costs[r + 1])
    return costs
