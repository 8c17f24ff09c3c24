# A NumPy confusion matrix over an index loop: np.add.at counts a repeated (truth, prediction) pair every time, as the loop does.
# bench: confusion(gt=np_int64[n]<4>, pred=np_int64[n]<4>)
import numpy as np


def confusion(gt: np.ndarray, pred: np.ndarray) -> np.ndarray:
    gt = gt.flatten()
    pred = pred.flatten()
    cm = np.zeros((4, 4), dtype=np.int64)
    for i in range(len(gt)):
        cm[gt[i], pred[i]] += 1
    return cm
