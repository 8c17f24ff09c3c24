# Trap: a module attribute called per sample (could hold BatchNorm in training mode).
import torch


class Wrapper:
    def encode(self, x: torch.Tensor) -> torch.Tensor:
        feats = []
        for i in range(x.size(0)):
            feats.append(self.net(x[i]))
        return torch.stack(feats)
