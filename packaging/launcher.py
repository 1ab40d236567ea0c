"""Entry script of the frozen app: the same `main` as the installed `orchard` command.

A separate script rather than gui/app.py itself, so that `gui.app` is imported once,
under its own name, like everywhere else.
"""

import multiprocessing
import sys

# `orchard sweep` runs fits in worker processes, which a frozen app starts by running
# itself again: this turns such a start into the worker instead of another Orchard.
multiprocessing.freeze_support()

from gui.app import main  # noqa: E402

sys.exit(main())
