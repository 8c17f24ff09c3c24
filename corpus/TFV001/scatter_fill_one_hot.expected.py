# One number stored at a position read from the samples (a one-hot per row): every write stores
# the same value, so repeated positions need no order and one advanced-index store does it all.
# The labels may be a tensor or an ndarray of any integer dtype: they become one int64 tensor.
import torch


def one_hot_rows(labels, num_classes):
    labels = labels.reshape(-1)
    onehot = torch.zeros(len(labels), num_classes)
    onehot[torch.arange(len(labels), device=onehot.device), torch.as_tensor(labels, dtype=torch.long, device=onehot.device)] = 1
    return onehot
