"""Feature building: from a raw table to the matrix the solvers search.

Above the data layer (reading tables, applying a fitted recipe) and the greedy
kernel, below training: `prepare` (a table to a `Dataset`; `prepare_numbers`, the
same for a table of numbers given as arrays), `binarized` (continuous features to 0/1
tests) and `recipe.fit` (choosing thresholds and value groups, some of them a greedy
tree's splits).
"""

from engine.featurize.prepare import binarized, prepare, prepare_numbers

__all__ = ["binarized", "prepare", "prepare_numbers"]
