"""How many threads one search may use.

The exact searches that split their root across threads (`contree`, ...) declare the
`threads` parameter; 0, the default, means every core this process may run on, unless
`ORCHARD_THREADS` says otherwise: a sweep's worker processes set it to their share
of the cores, so that several fits at once do not each start a thread per core.
"""

from __future__ import annotations

import os

from engine.solvers.protocol import Param

ENVIRONMENT = "ORCHARD_THREADS"


def threads_param(default: int = 0, why: str = "") -> Param:
    """The `threads` parameter, with a default (0 = every core) and why it is not 0."""
    return Param("threads", "int", default,
                 "Threads for the search (0 = every core" + (f"; {why}" if why else "")
                 + "). The answer's error is the same with any number; ties between "
                 "optimal trees are broken by the root's feature order when several "
                 "threads search.", 0, 1024)


THREADS = threads_param()


def cpu_count() -> int:
    """Cores this process may run on."""
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # macOS, Windows
        return os.cpu_count() or 1


def resolve(requested: int) -> int:
    """The thread count for a `threads` value (0 = the default described above)."""
    if requested > 0:
        return int(requested)
    try:
        share = int(os.environ.get(ENVIRONMENT, "0"))
    except ValueError:
        share = 0
    return share if share > 0 else cpu_count()
