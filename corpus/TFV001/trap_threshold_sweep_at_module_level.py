# Trap: a sweep at module level leaves `level` and `best` as module attributes other modules may
# import; one comparison against every level would leave other names there.
import numpy as np

RECALL = np.array([0.1, 0.4, 0.8])
PRECISION = np.array([1.0, 0.75, 0.5])
SCORE = 0.0
for level in np.linspace(0, 1, 11):
    if np.sum(RECALL >= level) == 0:
        best = 0
    else:
        best = np.max(PRECISION[RECALL >= level])
    SCORE += best / 11
