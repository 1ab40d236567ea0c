"""scikit-learn estimators over Orchard's engine: the notebook API (`import orchard`).

`OptimalTreeClassifier`, `DecisionDiagramClassifier` and `OptimalTreeRegressor` fit
the same way `orchard fit` does (same preparation, binarisation, solvers and model),
so a tree found in a notebook equals the one the command line finds on the same data
and settings, and saves to the same JSON model file.  They follow scikit-learn's
estimator contract (parameters stored as given, input checked by `validate_data`,
fitted attributes ending in `_`), so pipelines, grid search and pickling work.
`_OrchardEstimator` holds what they share (fitting through `engine.training.train`,
predicting through the model's preprocessing, the exports and the model file); the
classifiers add classes, the regressor a numeric target (each leaf predicts the
weighted mean of its rows, the tree minimising the weighted squared error).

Input: a numeric array, or a pandas DataFrame whose text columns are prepared as the
CLI prepares them (value groups; missing cells routed by each test).  Labels may be of any type; the
model file records them as text, as the CLI would read them from a CSV.  A
regression's target must be numbers (NaN refused: a CSV row without a target is left
out by the CLI, and a notebook should say so rather than drop it silently).

scikit-learn is needed only here (`pip install orchard[notebook]`).
"""

from __future__ import annotations

import signal
import threading
import warnings
from collections.abc import Callable
from pathlib import Path

import numpy as np
import pandas as pd

try:
    from sklearn.base import BaseEstimator, ClassifierMixin, RegressorMixin
    from sklearn.utils.multiclass import check_classification_targets
    from sklearn.utils.validation import (
        _check_sample_weight,
        check_is_fitted,
        validate_data,
    )
except ImportError as error:   # pragma: no cover - depends on the installation
    raise ImportError("Orchard's notebook API needs scikit-learn: "
                      "pip install 'orchard[notebook]'.") from error

from engine.data.class_weights import class_factors
from engine.data.columns import ColumnKind
from engine.data.csv_reader import RawTable
from engine.data.dataset import PrepOptions
from engine.data.task import AUTO, choose_task
from engine.featurize import prepare, prepare_numbers
from engine.data.preprocessing import class_label
from engine.errors import OrchardError, ParameterError
from engine.export import model_rules, to_python, to_sql
from engine.export.diagram import diagram_python, diagram_sql
from engine.model import Diagram, Tree, load_model
from engine.solvers import compile_ahead, default_solver_name
from engine.solvers.monitor import Monitor
from engine.solvers.protocol import Status
from engine.evaluation import Plan
from engine.training import DEFAULT_TIME_LIMIT, default_binarization, train
from engine.tuning import Tuner, candidates, resolve_metric
from engine.vocabulary import CLASSIFICATION, REGRESSION

TARGET = "__orchard_target__"


def _check_targets(y: np.ndarray) -> None:
    """scikit-learn's check that `y` (1-D after `validate_data`) holds classes.  Labels
    of an integer or bool dtype always do, and its type inference is a millisecond
    of a small fit."""
    if y.dtype.kind not in "biu":
        check_classification_targets(y)


class _OrchardEstimator(BaseEstimator):
    """What every estimator here shares: fitting through `engine.training.train` (the
    CLI's preparation of the same rows, with the task `_task`), predicting through the
    model's preprocessing, the exports and the model file.  A subclass says what its
    target is (`_targets`), what it runs (`_settings`) and what it needs of its model
    to predict (`_hold`)."""

    _task = CLASSIFICATION

    def _settings(self) -> tuple[str, dict]:
        """(algorithm, the solver's parameters) of this estimator's parameters."""
        raise NotImplementedError

    def _targets(self, y: np.ndarray, weights: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """(each row's target cell as the preparation reads it, the rows' weights) of
        the checked `y` and the sample weights; the fitted target attributes are set
        here (a classifier's `classes_`)."""
        raise NotImplementedError

    def _hold(self, model) -> None:
        """Take `model` (fitted here, or loaded) as the one this estimator predicts
        with."""
        self.model_ = model

    # ------------------------------------------------------------ fitting
    def fit(self, X, y, sample_weight=None):
        """Train on X (array or DataFrame) and y; `sample_weight` weighs the rows."""
        frame = X if isinstance(X, pd.DataFrame) else None
        X, y = validate_data(self, X, y, dtype=None if frame is not None else "numeric",
                             ensure_all_finite=False if frame is not None else "allow-nan",
                             y_numeric=self._task == REGRESSION)
        if len(y) < 2:
            raise ValueError(f"Fitting needs at least 2 samples; got {len(y)} sample.")
        weights = _check_sample_weight(sample_weight, X, dtype=np.float64)
        if not np.isfinite(weights).all() or (weights < 0).any():
            raise ValueError("sample_weight must be finite and not negative.")
        targets, weights = self._targets(y, weights)
        keep = weights > 0   # a row of weight 0 must not even shape the thresholds
        if not keep.any():
            raise ValueError("sample_weight is zero for every row.")
        algorithm, params = self._settings()
        monitor = Monitor(self.time_limit, on_incumbent=self._on_incumbent())
        try:   # an unknown algorithm is a ParameterError from here on
            options = PrepOptions(target=TARGET, task=self._task,
                                  binarize=self.binarize or default_binarization(algorithm),
                                  depth=params.get("depth"),
                                  kinds=_kinds(self.categorical, self.ordered),
                                  orders=_orders(self.ordered))
            compile_ahead.start(algorithm)   # a first fit's kernels compile meanwhile
            data = self._prepared(X if frame is None else frame, targets, keep, options)
            for warning in data.report.warnings:   # e.g. an identifier left out
                warnings.warn(warning, UserWarning, stacklevel=2)
            data.w = weights[keep]   # no row is dropped: targets and fills are complete
            with _cancel_on_interrupt(monitor):
                result = train(data, algorithm, params, monitor=monitor)
        except OrchardError as error:
            raise ValueError(_said(error)) from error
        if self.time_limit == DEFAULT_TIME_LIMIT and result.status == Status.TIME_LIMIT:
            warnings.warn(f"{result.stats.get('message', '')} (The default time limit "
                          f"is {DEFAULT_TIME_LIMIT:g} s: pass time_limit=None to search "
                          "until the proof.)", UserWarning, stacklevel=2)
        return self._adopt(result, algorithm)

    def _adopt(self, result, algorithm: str):
        """Take `result` (a training on this estimator's rows, its target attributes
        set) as the fitted model."""
        self._hold(result.tree)
        self.train_error_ = float(result.train_error)
        self.lower_bound_ = float(result.lower_bound)
        self.objective_ = float(result.objective)   # error + leaf_cost's cost per leaf
        self.optimal_ = bool(result.optimal)
        self.status_ = result.status.value
        self.message_ = str(result.stats.get("message", ""))
        self.incumbents_ = [tuple(map(float, x)) for x in result.incumbents]
        self.algorithm_ = str(result.stats.get("chosen_algorithm", algorithm))
        return self

    def _on_incumbent(self) -> Callable | None:
        callback, verbose = self.callback, self.verbose
        if callback is None and not verbose:
            return None

        def report(tree, t, error, bound):
            if verbose:
                print(f"[orchard] {t:8.2f} s  error {error:g}  bound {bound:g}",
                      flush=True)
            if callback is not None:
                callback(tree)
        return report

    @staticmethod
    def _prepared(X, targets: np.ndarray, keep: np.ndarray, options: PrepOptions):
        """The Dataset of the rows `keep` of X (array or DataFrame) whose target cells
        are `targets`: numbers straight from their arrays, a table with text through a
        table of its own (this call's copy, not kept through the search)."""
        numbers = _numbers(X)
        if numbers is not None:
            return prepare_numbers(numbers[keep], _column_names(X), targets[keep], options)
        table = _OrchardEstimator._table(X)
        table[TARGET] = targets
        table = table[keep].reset_index(drop=True)
        return prepare(RawTable(table, ",", True, "utf-8", False), options)

    @staticmethod
    def _table(X) -> pd.DataFrame:
        if isinstance(X, pd.DataFrame):
            table = X.copy()
            table.columns = [str(c) for c in table.columns]
            return table.reset_index(drop=True)
        return pd.DataFrame(np.asarray(X, dtype=np.float64), columns=_column_names(X))

    # --------------------------------------------------------- predicting
    def _features(self, X) -> np.ndarray:
        check_is_fitted(self, "model_")
        frame = X if isinstance(X, pd.DataFrame) else None
        if frame is not None and getattr(self, "_loaded", False):
            X = frame = self._model_columns(frame)
        X = validate_data(self, X, reset=False,
                          dtype=None if frame is not None else "numeric",
                          ensure_all_finite=False if frame is not None else "allow-nan")
        X = X if frame is None else frame
        prep, numbers = self.model_.prep, _numbers(X)
        try:
            if numbers is not None:
                columns = dict(zip(_column_names(X), numbers.T))
                if all(column.name in columns for column in prep.columns):
                    return prep.transform_columns(columns, len(numbers))
            return prep.transform(self._table(X))
        except OrchardError as error:
            raise ValueError(_said(error)) from error

    def _model_columns(self, frame: pd.DataFrame) -> pd.DataFrame:
        """A loaded model knows only the columns it reads (a file records no others),
        so the table's other columns, e.g. the constant or id-like ones the fit left
        out, are set aside rather than refused."""
        by_name = {str(c): c for c in frame.columns}
        wanted = [str(name) for name in self.feature_names_in_]
        if all(name in by_name for name in wanted):
            return frame[[by_name[name] for name in wanted]]
        return frame

    # ------------------------------------------------------------- exports
    def export_text(self) -> str:
        """The model as rules (what `orchard fit` prints)."""
        check_is_fitted(self, "model_")
        return model_rules(self.model_)

    to_rules = export_text

    def to_python(self) -> str:
        """A dependency-free Python module with `predict(row)` (a dict of raw cells)."""
        check_is_fitted(self, "model_")
        tree = isinstance(self.model_, Tree)
        return to_python(self.model_) if tree else diagram_python(self.model_)

    def to_sql(self) -> str:
        """One SQL CASE expression giving the class (a regression: the number) of a
        table row."""
        check_is_fitted(self, "model_")
        return to_sql(self.model_) if isinstance(self.model_, Tree) else \
            diagram_sql(self.model_)

    def save(self, path: str | Path) -> None:
        """Write the JSON model file `orchard predict` and the app read."""
        check_is_fitted(self, "model_")
        self.model_.save(path)

    @classmethod
    def load(cls, path: str | Path):
        """An estimator holding the model saved at `path` (by `save` or `orchard fit
        --out`).  A model of the other task is refused: a classifier cannot give a
        regression tree's numbers, nor a regressor a classification tree's classes."""
        model = load_model(path)
        if model.prep.task != cls._task:
            other = ("OptimalTreeRegressor" if model.prep.task == REGRESSION
                     else "OptimalTreeClassifier")
            raise ValueError(f"The model at {path} is a {model.prep.task} tree, and "
                             f"{cls.__name__} makes {cls._task} models: load it with "
                             f"{other}.load.")
        estimator = cls()
        estimator._loaded_targets(model)
        estimator._hold(model)
        estimator.n_features_in_ = len(model.prep.columns)
        estimator.feature_names_in_ = np.array([c.name for c in model.prep.columns],
                                               dtype=object)
        estimator._loaded = True
        return estimator

    def _loaded_targets(self, model) -> None:
        """The target attributes of a loaded `model` (a file records no more than the
        model does)."""

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.allow_nan = True      # missing cells are routed, as in a CSV
        tags.non_deterministic = False
        return tags


class _OrchardClassifier(ClassifierMixin, _OrchardEstimator):
    """What both classifiers share: the classes (any labels, recorded as text as the
    CLI reads them), class weights, and class probabilities."""

    def _targets(self, y: np.ndarray, weights: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        _check_targets(y)
        self.classes_ = np.unique(y)
        labels = [class_label(v) for v in self.classes_]
        if len(set(labels)) < len(labels):
            raise ValueError("Two classes have the same text form; relabel y.")
        codes = np.searchsorted(self.classes_, y)
        if self.class_weight is not None:   # "balanced" or {class: weight}
            weights = weights * self._class_factors(labels, codes)
        return np.array(labels, dtype=object)[codes], weights

    def _class_factors(self, labels: list[str], codes: np.ndarray) -> np.ndarray:
        """Each row's class weight, by the engine's one definition (per row, as
        scikit-learn's `compute_sample_weight`, so "balanced" ignores sample weights)."""
        weights = self.class_weight
        if isinstance(weights, dict):
            weights = {class_label(value): weight for value, weight in weights.items()}
        try:
            return class_factors(weights, codes, labels, np.ones(len(codes)))[codes]
        except OrchardError as error:
            raise ValueError(_said(error)) from error

    def _hold(self, model) -> None:
        """The model's classes are text in its own order; `_order` maps them to
        `classes_`' order."""
        super()._hold(model)
        labels = [class_label(v) for v in self.classes_]
        self._order = np.array([labels.index(name) for name in model.class_names])

    def _loaded_targets(self, model) -> None:
        """A loaded model's classes are its class names, as text."""
        self.classes_ = np.array(sorted(model.class_names), dtype=object)

    def predict(self, X) -> np.ndarray:
        """The class of each row of X."""
        features = self._features(X)
        return self.classes_[self._order[self.model_.predict(features)]]

    def predict_proba(self, X) -> np.ndarray:
        """Class frequencies of the training rows in the leaf (terminal) each row
        reaches, in the order of `classes_`."""
        features = self._features(X)
        model = self.model_
        reached = model.apply(features)
        counts = np.asarray(model.value, dtype=np.float64)[reached]
        if isinstance(model, Diagram):   # an unused terminal: its own class, surely
            empty = counts.sum(axis=1) == 0
            counts[empty, reached[empty] - model.n_internal] = 1.0
        totals = counts.sum(axis=1, keepdims=True)
        proba = np.zeros((len(reached), len(self.classes_)))
        proba[:, self._order] = counts / np.where(totals > 0, totals, 1.0)
        return proba


class OptimalTreeClassifier(_OrchardClassifier):
    """A decision tree of depth at most `max_depth`, optimal for the training error
    when the algorithm proves it (`optimal_`), found by `algorithm`: auto, blossom,
    contree, dl85, cadl85, sat-depth, sat-size or greedy.

    `time_limit` (seconds; 60 by default, as in the window; None searches until the
    proof) stops the search with the best tree so far, as does Ctrl-C (a
    KeyboardInterrupt in a notebook); `status_` then says which, and `message_`
    what was shown and what to try (a warning says it too when the default limit
    stopped the search: without it, a fit of 330,000 rows searched in silence for
    more than five minutes); `callback(tree)` sees every better tree, and
    `verbose=True` prints each.  `binarize` is `orchard fit --binarize` (default: the
    algorithm's own); `class_weight` ("balanced" or {class: weight}) multiplies the
    sample weights, as in scikit-learn, so the solver minimises the weighted error;
    `params` are the solver's other parameters (`orchard fit --param`);
    `categorical` names columns to split by value groups whatever they look like
    (`orchard fit --categorical`: numbers taken as text, a column that looks like an
    identifier kept); `ordered` maps text columns of ordered levels to their levels,
    lowest first (`orchard fit --ordered`; an empty list: the order guessed), split
    as thresholds."""

    def __init__(self, algorithm: str = "auto", max_depth: int = 3,
                 time_limit: float | None = DEFAULT_TIME_LIMIT, binarize: str | None = None,
                 class_weight: dict | str | None = None, params: dict | None = None,
                 callback: Callable | None = None, verbose: bool = False,
                 categorical: list[str] | None = None, ordered: dict | None = None):
        _keep(self, locals())

    @property
    def tree_(self) -> Tree:
        """The fitted tree (`engine.model.Tree`)."""
        return self.model_

    def _settings(self) -> tuple[str, dict]:
        if self.algorithm == "odd":
            raise ValueError("Use DecisionDiagramClassifier for decision diagrams.")
        return self.algorithm, {**(self.params or {}), "depth": self.max_depth}


class DecisionDiagramClassifier(_OrchardClassifier):
    """An optimal decision diagram (`odd`) of at most `max_depth` layers; the other
    parameters are as in `OptimalTreeClassifier`.

    Without a `time_limit`, the MILP step, which alone proves optimality, gets a
    default budget of a second per 200 training rows, between 1.5 and 30 s (HiGHS's
    proof may take hours beyond a few dozen rows), so a fit on a few thousand rows
    ends within about a minute; when that budget ends first, `status_` is
    "time_limit" and `message_` says so.  Give a `time_limit` to search longer."""

    def __init__(self, max_depth: int = 3, time_limit: float | None = None,
                 binarize: str | None = None, class_weight: dict | str | None = None,
                 params: dict | None = None, callback: Callable | None = None,
                 verbose: bool = False, categorical: list[str] | None = None,
                 ordered: dict | None = None):
        _keep(self, locals())

    @property
    def diagram_(self) -> Diagram:
        """The fitted decision diagram (`engine.model.Diagram`)."""
        return self.model_

    def _settings(self) -> tuple[str, dict]:
        return "odd", {**(self.params or {}), "depth": self.max_depth}


class OptimalTreeRegressor(RegressorMixin, _OrchardEstimator):
    """A regression tree of depth at most `max_depth`: each leaf predicts the weighted
    mean of its training rows, and the tree minimises the weighted sum of squared
    errors (`train_error_`); `score` is R², as for any scikit-learn regressor.

    `algorithm` is one that grows regression trees: `auto` (the default, as
    `engine.solvers.default_solver_name("regression")`: an exact search of least
    squared error, ConTree's over every threshold up to depth 2, else DL8.5's on the
    greedy tree's thresholds plus quantiles, never worse than greedy), `contree`,
    `dl85`, `cadl85` or `greedy` (CART's squared-error splits, as scikit-learn's
    `DecisionTreeRegressor`).  `min_leaf` is the least weight (rows) in a leaf (None:
    the algorithm's own; a whole number for `auto`); `leaf_cost` the cost of
    a leaf as a share of the root's squared error (0.01: a split must remove 1% of it
    to be kept; the tree is then pruned, see `engine.solvers.protocol.error_scale`).
    Both go to the solver only when given, so an algorithm without them says so
    rather than that it is not given them.  The other parameters are
    `OptimalTreeClassifier`'s (no class weights: there are no classes)."""

    _task = REGRESSION

    def __init__(self, algorithm: str = "auto", max_depth: int = 3,
                 min_leaf: float | None = None, leaf_cost: float = 0.0,
                 time_limit: float | None = DEFAULT_TIME_LIMIT, binarize: str | None = None,
                 params: dict | None = None, callback: Callable | None = None,
                 verbose: bool = False, categorical: list[str] | None = None,
                 ordered: dict | None = None):
        _keep(self, locals())

    @property
    def tree_(self) -> Tree:
        """The fitted tree (`engine.model.Tree`; `value[:, 0..2]` is each node's
        weight, mean and squared error)."""
        return self.model_

    def _settings(self) -> tuple[str, dict]:
        params = {**(self.params or {}), "depth": self.max_depth}
        if self.min_leaf is not None:
            params["min_leaf"] = self.min_leaf
        if self.leaf_cost:
            params["leaf_cost"] = self.leaf_cost
        return self.algorithm, params

    def _targets(self, y: np.ndarray, weights: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """y as float64 (`validate_data` has refused text and NaN floats; a None among
        objects becomes NaN only now, so it is refused here)."""
        targets = np.asarray(y, dtype=np.float64)
        if not np.isfinite(targets).all():
            raise ValueError("y holds a missing or infinite value: a regression target "
                             "needs a number on every row (drop those rows first).")
        return targets, weights

    def predict(self, X) -> np.ndarray:
        """The mean of the training rows in the leaf each row of X reaches."""
        features = self._features(X)   # first: it checks that the fit was made
        return np.asarray(self.model_.predict(features), dtype=np.float64)


def _said(error: OrchardError | str) -> str:
    """The engine's sentence for a notebook: the target it names is the estimator's y
    (the column name the table was given is internal)."""
    return str(error).replace(f"'{TARGET}'", "y")


def _numbers(X) -> np.ndarray | None:
    """X as float64 when every column holds numbers (an array `validate_data` has
    checked, or a DataFrame of int and float columns with distinct names): these
    skip the text table, whose parsing would give the same floats.  None for a frame
    with other columns (text, categories, booleans), which are prepared as in a CSV."""
    if not isinstance(X, pd.DataFrame):
        return np.asarray(X, dtype=np.float64)
    numeric = all(isinstance(t, np.dtype) and (t.kind in "iu" or t in _FLOATS)
                  for t in X.dtypes)
    names = _column_names(X)
    return X.to_numpy(dtype=np.float64) if numeric and len(set(names)) == len(names) \
        else None


_FLOATS = (np.dtype(np.float32), np.dtype(np.float64))


def _column_names(X) -> list[str]:
    """The column names the model records: a frame's own as text, else x0, x1, ..."""
    if isinstance(X, pd.DataFrame):
        return [str(c) for c in X.columns]
    return [f"x{j}" for j in range(X.shape[1])]


def _kinds(categorical, ordered=None) -> dict[str, ColumnKind]:
    """`PrepOptions.kinds` of the columns named in `categorical` and `ordered`."""
    if isinstance(categorical, str):
        raise ValueError("categorical takes a list of column names, e.g. ['reg'].")
    return {**{str(name): ColumnKind.CATEGORICAL for name in categorical or ()},
            **{str(name): ColumnKind.ORDERED for name in _orders(ordered, True)}}


def _orders(ordered, every: bool = False) -> dict[str, tuple[str, ...]]:
    """`PrepOptions.orders` of `ordered` ({column: levels}; with `every`, columns
    without levels too)."""
    if ordered is None:
        return {}
    if not isinstance(ordered, dict):
        raise ValueError("ordered takes {column: [levels, lowest first]}, e.g. "
                         "{'risk': ['low', 'medium', 'high']}.")
    return {str(name): tuple(str(v) for v in levels or ())
            for name, levels in ordered.items() if every or levels}


def _keep(estimator, arguments: dict) -> None:
    """Store an `__init__`'s arguments unchanged as attributes of the same names, as
    scikit-learn requires (`get_params` reads them back)."""
    for name, value in arguments.items():
        if name not in ("self", "__class__"):
            setattr(estimator, name, value)


class _cancel_on_interrupt:
    """Ctrl-C (SIGINT) stops the search and keeps its best tree, as on the command
    line; outside the main thread the handler cannot be installed and nothing
    changes."""

    def __init__(self, monitor: Monitor):
        self.monitor, self.previous = monitor, None

    def __enter__(self):
        if threading.current_thread() is threading.main_thread():
            self.previous = signal.signal(signal.SIGINT, lambda *_: self.monitor.cancel())
        return self

    def __exit__(self, *exc):
        if self.previous is not None:
            signal.signal(signal.SIGINT, self.previous)
        return False


__all__ = ["DecisionDiagramClassifier", "OptimalTreeClassifier", "OptimalTreeRegressor"]


def tune(X, y, algorithm: str | None = None, depths=None, min_leaf=None,
         leaf_cost=None, cv: int = 5,
         time_limit: float | None = DEFAULT_TIME_LIMIT, random_state: int = 0,
         binarize: str | None = None, params: dict | None = None,
         sample_weight=None, categorical: list[str] | None = None,
         metric: str | None = None, ordered: dict | None = None,
         task: str = AUTO) -> OptimalTreeClassifier | OptimalTreeRegressor:
    """The depth among `depths` (None: `engine.tuning.default_depths`, 1-6 and deeper
    for greedy, auto and hybrid) (the least leaf size among `min_leaf`, for greedy,
    auto, dl85 and cadl85, greedy trying 1, 5 and 20 by default; the cost per leaf
    among `leaf_cost`, 0 and 0.01 by default where the algorithm has one) chosen by a
    `cv`-fold cross-validation on X, y with the rule of half a standard error (see
    `engine.tuning`), then an estimator of that setting fitted on all of X, y and
    returned: an `OptimalTreeClassifier`, or for a regression an
    `OptimalTreeRegressor`.

    `task` is `orchard tune --task`: "auto" takes y of numbers with more than 20
    different values for a regression (`engine.data.task.choose_task`), anything else
    for classes; "classification" or "regression" says which.  `algorithm` None is
    "auto" for classes and the regression's default solver
    (`engine.solvers.default_solver_name`, auto) for numbers.  `metric` ranks the
    settings by their validation score (`engine.vocabulary.TASK_METRICS`): "accuracy"
    (the default for classes), "balanced" or "auc"; a regression's "r2" (its default)
    or "rmse" (lower is better); one of the other task is refused in a sentence.

    The estimator's `tuning_` is a DataFrame of every candidate (the mean validation
    score, e.g. `mean_accuracy` or `validation_r2`, its standard error, mean leaves,
    `chosen` and `best` marked; `attrs` hold the metric and the floor's score: the
    majority class's, or always predicting the training rows' mean), and
    `tuned_params_` the chosen setting; `time_limit` covers the whole (tuning gets
    all but the final fit's share); `categorical` and `ordered` are the estimators'.

    A plain `GridSearchCV` over the estimators works too; this is the one-call
    version with the rule that prefers the smaller tree."""
    frame = X if isinstance(X, pd.DataFrame) else None
    checks = {"dtype": None if frame is not None else "numeric",
              "ensure_all_finite": False if frame is not None else "allow-nan"}
    X, cells = validate_data(OptimalTreeClassifier(), X, y, **checks)
    given = X if frame is None else frame
    if sample_weight is not None:
        raise ValueError("tune does not take sample weights yet: fit the estimator "
                         "with the setting it chooses instead.")
    try:
        requested = task
        task = choose_task(TARGET, cells, requested)[0]
        metric = _tuning_metric(metric, task, requested)
        algorithm = algorithm or ("auto" if task == CLASSIFICATION
                                  else default_solver_name(task))
        grid = candidates(algorithm, depths, min_leaf, leaf_cost)
    except OrchardError as error:
        raise ValueError(_said(error)) from error
    estimator = OptimalTreeRegressor if task == REGRESSION else OptimalTreeClassifier
    model = estimator(algorithm, time_limit=time_limit, binarize=binarize,
                      categorical=categorical, ordered=ordered)
    # the fitted input's facts, and the target cells (and classes) as `fit` sets them
    _, y = validate_data(model, given, y, y_numeric=task == REGRESSION, **checks)
    targets, _ = model._targets(y, np.ones(len(y)))
    try:
        table = _OrchardEstimator._table(given)
        table[TARGET] = targets
        raw = RawTable(table, ",", True, "utf-8", False)
        options = PrepOptions(target=TARGET, task=task,
                              binarize=binarize or default_binarization(algorithm),
                              kinds=_kinds(categorical, ordered), orders=_orders(ordered))
        compile_ahead.start(algorithm)   # a first tuning's kernels compile meanwhile
        # the final fit is the Tuner's: its preparation is never cut by the time limit
        # (a fit of the returned estimator's own would be, and waste the tuning)
        tuning = Tuner(raw, options, algorithm, grid, params,
                       Plan("kfold", cv, seed=random_state), time_limit, metric).run()
    except OrchardError as error:
        raise ValueError(_said(error)) from error
    for warning in [*tuning.data.report.warnings, tuning.note]:
        if warning:   # an identifier left out; a choice below the majority class
            warnings.warn(_said(warning), UserWarning, stacklevel=2)
    chosen = {k: v for k, v in tuning.params.items() if k != "depth"}
    own = {k: v for k, v in chosen.items() if k in model.get_params() and k != "params"}
    extra = {k: v for k, v in chosen.items() if k not in own}
    model.set_params(max_depth=grid[tuning.chosen].depth, params=extra or None, **own)
    model._adopt(tuning.result, algorithm)
    rows = [s.to_dict() for s in tuning.scored]
    for i, row in enumerate(rows):
        row["chosen"], row["best"] = i == tuning.chosen, i == tuning.best
    model.tuning_ = pd.DataFrame(rows)
    model.tuning_.attrs["metric"] = tuning.metric
    # the floor's score: the majority class's accuracy, or the training mean's R²/RMSE
    model.tuning_.attrs["majority"] = tuning.majority
    model.tuning_.attrs["scored_on"] = tuning.scored_on()   # a sample of a big table?
    model.tuned_params_ = {"max_depth": model.max_depth, **chosen}
    return model


def _tuning_metric(metric: str | None, task: str, requested: str) -> str:
    """`engine.tuning.resolve_metric`, its refusal saying too, when the task was
    chosen from y's values, how to choose the other."""
    try:
        return resolve_metric(metric, task)
    except OrchardError as error:
        if requested != AUTO:
            raise
        other = CLASSIFICATION if task == REGRESSION else REGRESSION
        raise ParameterError(f"{error} (y was taken for a {task} by its values: "
                             f"pass task='{other}' to tune a {other}.)") from None
