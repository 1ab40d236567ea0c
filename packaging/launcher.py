"""Entry script of the frozen app: the same `main` as the installed `orchard` command.

A separate script rather than gui/app.py itself, so that `gui.app` is imported once,
under its own name, like everywhere else.  Two variables serve the build and its
smoke test (set by packaging/build.py and packaging/smoke_test.py, never by users):

* ORCHARD_BUILD_KERNEL_CACHE: compile every solver's kernels into the cache the
  runtime hook (numba_cache_hook.py) pointed numba at, and exit;
* ORCHARD_COUNT_COMPILES: print on stderr, at exit, how many kernels were compiled
  rather than loaded from the cache.
"""

import atexit
import multiprocessing
import os
import sys

# `orchard sweep` runs fits in worker processes, which a frozen app starts by running
# itself again: this turns such a start into the worker instead of another Orchard.
multiprocessing.freeze_support()

if os.environ.get("ORCHARD_COUNT_COMPILES"):
    from engine.warmup import count_compiles
    counter = count_compiles()
    atexit.register(lambda: print(f"orchard: compiled {counter.count} kernels",
                                  file=sys.stderr, flush=True))

if os.environ.get("ORCHARD_BUILD_KERNEL_CACHE"):
    from engine.warmup import warm_up
    report = warm_up()
    for name, error in report.errors.items():
        print(f"orchard: warming up {name} failed: {error}", file=sys.stderr)
    sys.exit(1 if report.errors else 0)

from gui.app import main  # after the variables above are acted on

sys.exit(main())
