"""Experiments at scale: cross-validation sweeps over datasets, algorithms and parameters.

    sweep = load_spec("sweep.json")                   # spec.py: what to fit
    outcome = run_sweep(sweep, "results.csv")         # runner.py: local processes
    outcome.table                                     # one row per fit (tasks.COLUMNS)

`orchard sweep SPEC` is the same from the command line.  Each fit is a `Task`
(tasks.py), run by a backend (backends.py: this process, a local process pool, or a
Dask cluster) and recorded at once in a journal (journal.py) so an interrupted sweep
resumes where it stopped.  One fit is one split of `engine.evaluation`'s
cross-validation, the same code as the GUI's Test accuracy.
"""

from engine.experiments.backends import (
    DaskCluster,
    InProcess,
    ProcessPool,
    make_backend,
)
from engine.experiments.journal import journal_path
from engine.experiments.runner import Outcome, run_sweep
from engine.experiments.spec import Sweep, load_spec, sweep_from_dict
from engine.experiments.tasks import COLUMNS, FAILED, TIMING, Task, run_fit

__all__ = ["COLUMNS", "FAILED", "TIMING", "DaskCluster", "InProcess", "Outcome",
           "ProcessPool", "Sweep", "Task", "journal_path", "load_spec", "make_backend",
           "run_fit", "run_sweep", "sweep_from_dict"]
