"""A model re-expressed on the features of the table it was trained from.

Some paths search on features derived from the user's table rather than on the
table's own: `auto` hands Blossom the 0/1 tests `age <= 37.5` of the greedy tree's
thresholds when the table's columns are numbers, and a re-solve may do the same under
a node.  The model the rest of the program sees (predict, node rows, row paths, every
export, editing, cross-validation) must read the table it was trained on, so
`engine.training.train` passes every result and every live incumbent through
`on_features` once, and no caller ever sees the derived space.

A 0/1 test `column <= t` on a numeric column becomes the threshold `t` on that
column (on its continuous feature with the same missing-value route).  A tree sends a row left when `x[f] <= threshold`; on the 0/1 feature that is
"the test does not hold" (`x > t`), on the raw column it is `x <= t`, so the two
children trade places.  Any other feature must be one of the table's own.
"""

from __future__ import annotations

from dataclasses import replace

import numpy as np

from engine.data.features import LE, NUM, Feature
from engine.data.preprocessing import Preprocessing
from engine.model.diagram import Diagram
from engine.model.tree import Tree


def on_features(model: Tree | Diagram | None, prep: Preprocessing) -> Tree | Diagram | None:
    """`model` with its tests on `prep`'s features (the same object when they already
    are); a RuntimeError names a test that the table's features cannot express."""
    if model is None or model.prep is prep or model.prep.features == prep.features:
        return model
    if isinstance(model, Diagram):
        raise RuntimeError("A decision diagram came back on features other than its "
                           "table's: this is a bug.")
    index = {feature: j for j, feature in enumerate(prep.features)}
    index.update({(f.column, NUM, f.missing): j for j, f in enumerate(prep.features)
                  if f.op == NUM})
    feature = model.feature.copy()
    threshold = model.threshold.copy()
    left, right = model.left.copy(), model.right.copy()
    for node in np.flatnonzero(model.feature >= 0):
        own = model.features[model.feature[node]]
        j, t, swap = _locate(own, index)
        feature[node] = j
        if t is not None:
            threshold[node] = t
        if swap:
            left[node], right[node] = model.right[node], model.left[node]
    return replace(model, feature=feature, threshold=threshold, left=left, right=right,
                   prep=prep)


def _locate(own: Feature, index: dict) -> tuple[int, float | None, bool]:
    """(feature index on the table, the new threshold or None to keep the node's,
    whether the children trade places).  `index` also maps (column, NUM, route) to
    the continuous feature with that missing-value route."""
    if own in index:
        return index[own], None, False
    raw = (own.column, NUM, own.missing)
    if own.op == LE and raw in index:
        return index[raw], float(own.value), True
    raise RuntimeError(f"The test '{own.condition()}' is not one of the table's features "
                       "and not a threshold on one of its numeric columns: this is a bug.")
