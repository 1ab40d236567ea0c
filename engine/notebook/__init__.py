"""`import orchard`: the notebook API, installed under that name (see pyproject.toml's
package-dir).  The estimators live in `engine.estimators`; this package only names
them, so a pickled estimator refers to one module whichever way it was imported."""

from engine.estimators import (DecisionDiagramClassifier, OptimalTreeClassifier,
                               OptimalTreeRegressor, tune)
from engine.model import load_model

__all__ = ["DecisionDiagramClassifier", "OptimalTreeClassifier", "OptimalTreeRegressor",
           "load_model", "tune"]
