# A loop-invariant weight added at every index.
# bench: votes(voters=index64[n]<6>, weight=float[0.5])
import torch


def votes(voters: torch.Tensor, weight: float) -> torch.Tensor:
    voters = voters.view(-1)
    score = torch.zeros(6)
    score.index_put_((voters.long(),), torch.as_tensor(weight, dtype=score.dtype, device=score.device), accumulate=True)
    return score
