# Must stay: `grads` must have at least four dimensions (`axis=(2, 3)`) but nothing says how
# many. With four, each weight is one number and `weights[:, None, None] * target` is the batch;
# with five, each weight is a row that broadcasts against the last axis of a map, which the
# batched product lines up otherwise. The checker draws ranks past the code's floor and
# refutes every form it is offered.
import numpy as np


def class_map(grads: np.ndarray, target: np.ndarray) -> np.ndarray:
    weights = np.mean(grads, axis=(2, 3))[0, :]
    cam = np.zeros(target.shape[1:], dtype=np.float32)
    for i, w in enumerate(weights):
        cam += w * target[i, :, :]
    return np.maximum(cam, 0)
