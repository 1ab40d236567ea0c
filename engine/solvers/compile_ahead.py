"""A solver's kernels compiled in a process of their own, ahead of the run needing them.

numba compiles a kernel missing from its disk cache at its first call: tens of seconds
on one core, once per computer, which no Stop interrupts.  A first `orchard fit` or
notebook fit would compile the preparation's kernels, then greedy's, then the
solver's, one after the other.  `start` instead hands the solver's own kernels to a
child process (`python -m engine.warmup --own NAME`) as soon as the run begins, so they
compile on another core while this process reads and prepares the data; `wait`, just
before the search, waits for it off the run's clock (`Monitor.off_clock`), and the
search then loads them from the disk cache the child wrote.  Nothing starts on a
machine of one core or in the frozen app (which ships its kernels), and a failed
child only means this process compiles the kernels itself, as before.

`compile_all` does the same for every solver at once, on every core (the window's
warm-up), so that the window's own process only loads the kernels.
"""

from __future__ import annotations

import subprocess
import sys
import time

from engine.solvers import kernel_support as ks
from engine.solvers.threads import cpu_count
from engine.solvers.registry import get_solver

_UNDER_WAY: dict[str, subprocess.Popen] = {}


def parts(name: str) -> tuple[str, ...]:
    """The solvers whose kernels a run of `name` compiles (`auto`: the ones it picks from)."""
    return tuple(getattr(get_solver(name), "delegates", (name,)))


# The solvers with kernels of their own, the longest to compile first (measured:
# contree 38 s, blossom 33 s, dl85 28 s, greedy 18 s of one loaded core).
LONGEST_FIRST = ("contree", "blossom", "dl85", "greedy")


_READY: set[str] = set()   # solvers whose kernels were found compiled: not asked again


def _missing(name: str) -> bool:
    """Whether numba's disk cache lacks a kernel of `name` (the answer reads the cache's
    index files, so a yes is remembered: small fits must not pay it each time)."""
    if name in _READY:
        return False
    if ks.compiled(*get_solver(name).kernels()):
        _READY.add(name)
        return False
    return True


def _child(name: str) -> subprocess.Popen:
    return subprocess.Popen([sys.executable, "-m", "engine.warmup", "--own", name],
                            stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                            stderr=subprocess.DEVNULL)


def _may_fork() -> bool:
    return not getattr(sys, "frozen", False) and cpu_count() >= 2


def under_way() -> list[str]:
    """The solvers whose kernels a child process is compiling now."""
    return [name for name, child in list(_UNDER_WAY.items()) if child.poll() is None]


def start(name: str) -> list[str]:
    """Start compiling the kernels of `name` (and of the solvers it delegates to) that
    numba's disk cache lacks, each in a child process; returns the solvers started."""
    if not _may_fork():
        return []
    started = []
    for part in parts(name):
        if part in under_way() or not _missing(part):
            continue
        _UNDER_WAY[part] = _child(part)
        started.append(part)
    return started


def compile_all(names: list[str], should_stop=lambda: False,
                on_done=lambda name: None, poll: float = 0.1) -> None:
    """Compile the kernels of the solvers in `names` that the disk cache lacks, in
    child processes, as many at once as there are cores, the longest first; returns
    when all have ended (`on_done(name)` after each) or, at once, when `should_stop()`
    (the children are then ended: numba writes each cache entry whole or not at all)."""
    if not _may_fork():
        return
    def order(name: str) -> int:
        return LONGEST_FIRST.index(name) if name in LONGEST_FIRST else len(LONGEST_FIRST)

    waiting, covered = [], set()
    for part in sorted(dict.fromkeys(p for name in names for p in parts(name)), key=order):
        kernels = set(get_solver(part).kernels())
        if kernels and not kernels <= covered and _missing(part):   # cadl85: dl85's
            waiting.append(part)
            covered |= kernels
    running: list[str] = []   # in _UNDER_WAY too, so that a run meanwhile waits
    try:
        while waiting or running:
            if should_stop():
                return
            while waiting and len(running) < cpu_count():
                name = waiting.pop(0)
                if name not in under_way():   # a run's `start` may have begun it
                    _UNDER_WAY[name] = _child(name)
                running.append(name)
            for name in [n for n in running if n not in under_way()]:
                running.remove(name)
                on_done(name)
            time.sleep(poll)
    finally:
        for name in running:
            if name in _UNDER_WAY:
                _UNDER_WAY.pop(name).terminate()


def wait(monitor, name: str, poll: float = 0.05) -> None:
    """Wait for the compiles of `name`'s kernels under way (not the other solvers' the
    window's warm-up may be compiling), off `monitor`'s clock; a Stop ends the wait
    (the children go on filling the cache for the next run)."""
    needed = set(parts(name))
    if not needed & set(under_way()):
        return
    with monitor.off_clock():
        while needed & set(under_way()) and not monitor.should_stop():
            time.sleep(poll)
    for name, child in list(_UNDER_WAY.items()):
        if child.poll() is not None:
            _UNDER_WAY.pop(name, None)
