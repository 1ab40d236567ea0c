"""Class weights: how much a row of each class counts in the error a solver minimises.

An analyst whose rare class matters (fraud, failure, disease) weighs it up; every
solver already minimises a weighted error, so class weights are row weights, applied
once in `prepare` (and by the notebook API) through `class_factors`.  "balanced"
is scikit-learn's definition: rows / (classes present × rows of the class), so each
class present weighs the same in total.
"""

from __future__ import annotations

import math

import numpy as np

from engine.errors import DataError, ParameterError

BALANCED = "balanced"
SYNTAX = "'balanced' or CLASS=WEIGHT pairs separated by commas (e.g. yes=5,no=1)"


def _weight(text: str, name: str) -> float:
    try:
        value = float(text)
    except ValueError:
        value = math.nan
    if not (math.isfinite(value) and value > 0):
        raise ParameterError(f"The weight of class '{name}' must be a positive number, "
                             f"not '{text.strip()}'.")
    return value


def parse_class_weight(text: str) -> str | dict[str, float]:
    """The command line's `--class-weight` value: "balanced" or {class name: weight}."""
    text = text.strip()
    if text.lower() == BALANCED:
        return BALANCED
    weights: dict[str, float] = {}
    for item in text.split(","):
        name, equals, value = item.rpartition("=")
        if not equals or not name.strip():
            raise ParameterError(f"The class weights must be {SYNTAX}, not '{text}'.")
        weights[name.strip()] = _weight(value, name.strip())
    return weights


def class_factors(class_weight: str | dict[str, float], y: np.ndarray,
                  class_names: list[str], counts: np.ndarray) -> np.ndarray:
    """The factor each class's rows are weighted by (classes not named keep 1).

    `class_weight` is "balanced", {class name: weight} or the text of either.
    `counts` are the rows' multiplicities (merged duplicates count several times),
    which "balanced" counts, like scikit-learn, rather than any other weights.
    """
    n_classes = len(class_names)
    factors = np.ones(n_classes)
    if isinstance(class_weight, str):   # as typed in the window
        class_weight = parse_class_weight(class_weight)
    if class_weight == BALANCED:
        totals = np.bincount(y, weights=counts, minlength=n_classes)
        present = totals > 0
        factors[present] = totals.sum() / (present.sum() * totals[present])
        return factors
    index = {name: k for k, name in enumerate(class_names)}
    for name, weight in class_weight.items():
        if str(name) not in index:
            shown = ", ".join(class_names[:10]) + (", ..." if n_classes > 10 else "")
            raise DataError(f"The class weights name the class '{name}', which the target "
                            f"column does not have (its classes: {shown}).")
        factors[index[str(name)]] = _weight(str(weight), str(name))
    return factors


def weights_from_costs(costs, class_names: list[str]) -> dict[str, float]:
    """Class weights that make a solver minimise the total cost of its errors, from
    a cost matrix (`costs[i][j]`: the cost of predicting class j for a row of class
    i; the diagonal is not read).

    A leaf predicting class j costs sum over i != j of (its rows of class i) x
    costs[i][j]; when each true class's errors cost the same whatever is predicted
    (always so with two classes), that is the weighted error with class i's rows
    weighing costs[i][·], and every exact solver finds the cheapest tree.  Costs that
    depend on the predicted class too cannot be written as weights: refused in one
    sentence rather than trained approximately.
    """
    matrix = np.asarray(costs, dtype=float)
    n = len(class_names)
    if matrix.shape != (n, n):
        raise ParameterError(f"The cost matrix must be {n} x {n}, one row and one column "
                             "per class.")
    weights = {}
    for i, name in enumerate(class_names):
        errors = np.delete(matrix[i], i)
        if not np.all(np.isfinite(errors)) or (errors <= 0).any():
            raise ParameterError(f"The costs of misclassifying class '{name}' must be "
                                 "positive numbers.")
        if not np.allclose(errors, errors[0]):
            raise ParameterError(
                f"Misclassifying class '{name}' costs {', '.join(f'{c:g}' for c in errors)} "
                "depending on the class predicted: the tree solvers train exactly on one "
                "cost per true class; give its row one cost.")
        weights[name] = float(errors[0])
    return weights
