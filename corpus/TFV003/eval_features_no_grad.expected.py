# An evaluation loop under torch.no_grad() collecting features and labels from a model.
import torch


def extract(model, loader):
    model.eval()
    feats = torch.empty(0, 128)
    labels = torch.empty(0, dtype=torch.long)
    with torch.no_grad():
        feats_parts = []
        labels_parts = []
        for images, targets in loader:
            f = model(images)
            feats_parts.append(f.cpu())
            labels_parts.append(targets.cpu())
        feats = torch.cat([feats, *feats_parts], dim=0)
        labels = torch.cat([labels, *labels_parts], dim=0)
    return feats, labels
