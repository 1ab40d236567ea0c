"""How late a run answers a cancel, measured so that only the solver's own latency
counts.

A full run of the suite builds up a heap that a full garbage collection walks for a
good part of a second, and an earlier test may leave a stopped HiGHS run ending on a
core; either landed inside a measured half second (test_odd's and test_odd_lns's
cancel tests failed late in fresh-clone runs, never alone).  So the heap is frozen
and earlier HiGHS runs joined before the clock starts, as the window freezes its own
heap after warm-up (`settle_heap`).  When the answer is late anyway, the main
thread's stacks sampled after the cancel say where it was.
"""
import collections
import gc
import sys
import threading
import time
import traceback

from engine.solvers.monitor import Monitor
from engine.solvers.odd.milp import wait_idle


def cancelled_after(seconds: float, run):
    """Call `run(monitor)`, cancel the monitor `seconds` later; returns (its result,
    seconds from the cancel to the return, where the main thread spent them)."""
    wait_idle(30)
    gc.collect()
    gc.freeze()
    monitor, cancelled, done = Monitor(None), {}, threading.Event()
    main = threading.get_ident()
    samples = collections.Counter()

    def cancel():
        time.sleep(seconds)
        cancelled["at"] = time.monotonic()
        monitor.cancel()
        while not done.wait(0.05):
            frame = sys._current_frames().get(main)
            if frame is not None:
                samples["".join(traceback.format_stack(frame)[-5:])] += 1

    thread = threading.Thread(target=cancel)
    thread.start()
    try:
        result = run(monitor)
        late = time.monotonic() - cancelled["at"]
    finally:
        done.set()
        thread.join()
        gc.unfreeze()
    where = "\n".join(f"{n} samples at:\n{stack}" for stack, n in samples.most_common(3))
    return result, late, where
