# Trap: np.append makes a Python int an int64 array, so an int32 start becomes int64; one
# np.concatenate(..., axis=None) would keep int32 (NumPy's weak Python scalars).
import numpy as np


def label_list(records):
    labels = np.zeros(0, dtype=np.int32)
    for rec in records:
        label = int(rec)
        labels = np.append(labels, label)
    return labels
