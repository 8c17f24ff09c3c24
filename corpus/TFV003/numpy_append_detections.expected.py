# numpy: scores and true/false-positive flags grown with np.append (no axis) per detection, in
# if/else branches and after a `continue`; each name keeps one list for all of its growth sites.
# bench: match_detections(detections=np_float32[n,5], has_truth=int, threshold=float[0.5])
import numpy as np


def match_detections(detections, has_truth, threshold):
    scores = np.zeros((0,))
    false_positives = np.zeros((0,))
    true_positives = np.zeros((0,))
    scores_parts = []
    false_positives_parts = []
    true_positives_parts = []
    for d in detections:
        scores_parts.append(d[4])
        if not has_truth:
            false_positives_parts.append(1)
            true_positives_parts.append(0)
            continue
        if d[0] >= threshold:
            false_positives_parts.append(0)
            true_positives_parts.append(1)
        else:
            false_positives_parts.append(1)
            true_positives_parts.append(0)
    scores = np.concatenate([scores, *scores_parts], axis=None)
    false_positives = np.concatenate([false_positives, *false_positives_parts], axis=None)
    true_positives = np.concatenate([true_positives, *true_positives_parts], axis=None)
    return scores, false_positives, true_positives
