# An evaluation loop under torch.no_grad() collecting features and labels from a model.
import torch


def extract(model, loader):
    model.eval()
    feats = torch.empty(0, 128)
    labels = torch.empty(0, dtype=torch.long)
    with torch.no_grad():
        for images, targets in loader:
            f = model(images)
            feats = torch.cat([feats, f.cpu()], dim=0)
            labels = torch.cat([labels, targets.cpu()], dim=0)
    return feats, labels
