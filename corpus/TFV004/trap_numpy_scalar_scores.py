# Trap: scores from a metric may be NumPy float64 scalars or one-element arrays; dropping `.item()` keeps a one-element ndarray, which int() rejects in NumPy 2 (the checker refutes the rewrite on an ndarray).
def count_confident(metric, batches, threshold):
    hits = 0
    for batch in batches:
        score = metric(batch)
        hits += (score > threshold).item()
    return hits
