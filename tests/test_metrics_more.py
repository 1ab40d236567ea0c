"""Balanced accuracy, per-class scores and ROC AUC agree with scikit-learn's."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from sklearn import metrics as sk

from engine.metrics import balanced_accuracy, per_class, roc_auc, roc_curve


@st.composite
def labelled(draw):
    n = draw(st.integers(1, 60))
    k = draw(st.integers(2, 5))
    y = np.array(draw(st.lists(st.integers(0, k - 1), min_size=n, max_size=n)))
    p = np.array(draw(st.lists(st.integers(0, k - 1), min_size=n, max_size=n)))
    weighted = draw(st.booleans())
    w = (np.array(draw(st.lists(st.integers(1, 5), min_size=n, max_size=n)), dtype=float)
         if weighted else None)
    return y, p, k, w


@pytest.mark.filterwarnings("ignore:y_pred contains classes not in y_true")
@settings(max_examples=200, deadline=None)
@given(labelled())
def test_balanced_accuracy_and_per_class_equal_scikit_learn(case):
    y, p, k, w = case
    assert balanced_accuracy(y, p, k, w) == pytest.approx(
        sk.balanced_accuracy_score(y, p, sample_weight=w))
    ours = per_class(y, p, k, w)
    precision, recall, f1, _ = sk.precision_recall_fscore_support(
        y, p, labels=list(range(k)), sample_weight=w, zero_division=0)
    np.testing.assert_allclose(ours["precision"], precision)
    np.testing.assert_allclose(ours["recall"], recall)
    np.testing.assert_allclose(ours["f1"], f1)
    expected_support = np.bincount(y, weights=w, minlength=k)
    np.testing.assert_allclose(ours["support"], expected_support)


@settings(max_examples=200, deadline=None)
@given(st.integers(2, 60), st.integers(0, 2**32 - 1), st.booleans(), st.booleans())
def test_roc_auc_equals_scikit_learn(n, seed, ties, weighted):
    rng = np.random.default_rng(seed)
    positive = rng.random(n) < 0.4
    if positive.all() or not positive.any():
        positive[0] = not positive[0]
    scores = rng.integers(0, 4, n) / 4 if ties else rng.random(n)
    w = rng.integers(1, 4, n).astype(float) if weighted else None
    assert roc_auc(positive, scores, w) == pytest.approx(
        sk.roc_auc_score(positive, scores, sample_weight=w))
    fpr, tpr = roc_curve(positive, scores, w)
    sk_fpr, sk_tpr, _ = sk.roc_curve(positive, scores, sample_weight=w,
                                     drop_intermediate=False)
    np.testing.assert_allclose(fpr, sk_fpr)
    np.testing.assert_allclose(tpr, sk_tpr)


def test_a_tree_that_ignores_the_rare_class_scores_half():
    y = np.array([0] * 9 + [1])
    assert balanced_accuracy(y, np.zeros(10, dtype=int), 2) == 0.5
