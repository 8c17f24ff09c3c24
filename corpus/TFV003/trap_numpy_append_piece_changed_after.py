# Trap: the row is changed in place after it was appended; np.append copied it before the
# change, a list would hold the changed row.
import numpy as np


def rows_then_mark(records):
    rows = np.zeros((0, 3))
    for rec in records:
        row = np.zeros((1, 3))
        row[0, 0] = rec
        rows = np.append(rows, row, axis=0)
        row[0, 1] = 1
    return rows
