# Trap: scores from a metric may be NumPy scalars or one-element arrays; dropping `.item()` keeps a one-element NumPy array where the comparison gives one, which int() rejects in NumPy 2 (the checker refutes the rewrite on such NumPy values).
def count_confident(metric, batches, threshold):
    hits = 0
    for batch in batches:
        score = metric(batch)
        hits += (score > threshold).item()
    return hits
