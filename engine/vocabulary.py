"""Names of choices the command line and the window offer, with no numpy in sight.

`orchard --help` lists them; importing them from the modules that act on them would
import numpy, pandas and the solvers before the help could print (issue 49).
"""

# `route`: each test decides where a missing cell goes; `impute`: it takes the
# column's median / most frequent value; `indicator`: that, plus a 0/1 "is missing"
# feature; `drop`: rows with a missing cell are left out.
MISSING_POLICIES = ("route", "impute", "indicator", "drop")

# What a tree predicts: a class, or a number (a leaf's mean).  `auto` (the default)
# chooses from the target column (`engine.data.tasks.choose_task`).
CLASSIFICATION = "classification"
REGRESSION = "regression"
TASKS = (CLASSIFICATION, REGRESSION)

# What a tuning may rank settings by (`Tuner(metric=...)`, `orchard tune --metric`).
METRICS = {"accuracy": "accuracy", "balanced": "balanced accuracy",
           "auc": "AUC (two classes)", "r2": "R² (regression)",
           "rmse": "RMSE (regression)"}
# Which of them apply to each task, the task's default first: a class has no squared
# error, and a number no accuracy (asking for one is refused in one sentence).
TASK_METRICS = {CLASSIFICATION: ("accuracy", "balanced", "auc"),
                REGRESSION: ("r2", "rmse")}
# The measures a lower value of is better (an error, where the others are shares).
LOWER_IS_BETTER = ("rmse",)
