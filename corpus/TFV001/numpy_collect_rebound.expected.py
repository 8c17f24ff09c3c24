# Per-sample scores collected in a list that the next line turns into a float32 array under the
# same name: the list ends there, so the scores can be computed at once and cast the same way.
import numpy as np


def squashed_scores(samples, scale: float):
    values = np.asarray(samples, dtype=np.float64).reshape(-1)
    scores = np.float32(np.tanh(values * scale))
    return scores
