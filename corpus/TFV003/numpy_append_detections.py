# numpy: scores and true/false-positive flags grown with np.append (no axis) per detection, in
# if/else branches and after a `continue`; each name keeps one list for all of its growth sites.
# bench: match_detections(detections=np_float32[n,5], has_truth=int, threshold=float[0.5])
import numpy as np


def match_detections(detections, has_truth, threshold):
    scores = np.zeros((0,))
    false_positives = np.zeros((0,))
    true_positives = np.zeros((0,))
    for d in detections:
        scores = np.append(scores, d[4])
        if not has_truth:
            false_positives = np.append(false_positives, 1)
            true_positives = np.append(true_positives, 0)
            continue
        if d[0] >= threshold:
            false_positives = np.append(false_positives, 0)
            true_positives = np.append(true_positives, 1)
        else:
            false_positives = np.append(false_positives, 1)
            true_positives = np.append(true_positives, 0)
    return scores, false_positives, true_positives
