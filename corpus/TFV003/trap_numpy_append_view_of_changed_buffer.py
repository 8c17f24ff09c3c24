# Trap: the piece is a view of a buffer that is changed in place after it was appended; a list
# would hold the same view every step, where np.append copied its values at the time.
import numpy as np


def snapshots(steps):
    state = np.zeros((2, 3))
    history = np.zeros((0, 3))
    for k in range(steps):
        row = state[0]
        history = np.append(history, row[None, :], axis=0)
        state[0] += 1
    return history
