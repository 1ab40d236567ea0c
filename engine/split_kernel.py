"""Numba kernel of the splits by hand (`engine.splits`): the class weights of a node's
rows where each 0/1 feature holds.

One pass over the node's rows, each row's features read in order (the matrix is laid
out by rows), adding the row's weight to its class: 300,000 rows of 830 features in
a fraction of a second, where numpy had to gather a float copy of the rows first (5 s
for the same table) or hold a rows x classes matrix (1.2 GB with 500 classes).
"""

from __future__ import annotations

import numpy as np
from numba import njit


@njit(cache=True, nogil=True)
def class_weights_where(X, rows, y, w, columns, n_classes):
    """out[c, k] = the weight of the rows `rows` of class c where X[row, columns[k]]
    holds (is above 0.5)."""
    out = np.zeros((n_classes, len(columns)))
    for i in rows:
        c, weight = y[i], w[i]
        for k in range(len(columns)):
            if X[i, columns[k]] > 0.5:
                out[c, k] += weight
    return out
