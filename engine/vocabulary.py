"""Names of choices the command line and the window offer, with no numpy in sight.

`orchard --help` lists them; importing them from the modules that act on them would
import numpy, pandas and the solvers before the help could print (issue 49).
"""

# `route`: each test decides where a missing cell goes; `impute`: it takes the
# column's median / most frequent value; `indicator`: that, plus a 0/1 "is missing"
# feature; `drop`: rows with a missing cell are left out.
MISSING_POLICIES = ("route", "impute", "indicator", "drop")

# What a tuning may rank settings by (`Tuner(metric=...)`, `orchard tune --metric`).
METRICS = {"accuracy": "accuracy", "balanced": "balanced accuracy",
           "auc": "AUC (two classes)"}

# What a tree predicts: a class, or a number (a leaf's mean).  `auto` (the default)
# chooses from the target column (`engine.data.tasks.choose_task`).
CLASSIFICATION = "classification"
REGRESSION = "regression"
TASKS = (CLASSIFICATION, REGRESSION)
