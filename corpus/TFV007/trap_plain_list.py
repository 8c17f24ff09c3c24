# Trap: a Python list of numbers with `+=`: no array library is involved, so there is no scan to call.
def running_total(values: list) -> list:
    for i in range(1, len(values)):
        values[i] += values[i - 1]
    return values
