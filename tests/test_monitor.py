"""Monitor: cancel, deadline, incumbents from a nogil numba kernel through the sink."""

import threading
import time

import numpy as np
import pytest
from numba import njit

from engine.solvers import kernel_support as ks
from engine.solvers.monitor import Monitor
from engine.solvers.protocol import Status


@njit(nogil=True)
def _anytime_kernel(control, state, events, nodes, thresholds, values, n_improvements, pause):
    """Publishes `n_improvements` ever smaller errors, spinning `pause` s between them,
    then spins until stopped; returns how many it published."""
    feature = np.array([0, -1, -1], dtype=np.int32)
    left = np.array([1, -1, -1], dtype=np.int32)
    right = np.array([2, -1, -1], dtype=np.int32)
    threshold = np.array([0.5, 0.0, 0.0])
    value = np.zeros((3, 2))
    published = 0
    while not ks.should_stop(control):
        if published < n_improvements:
            start = ks.monotonic()
            while ks.monotonic() - start < pause:
                pass
            error = float(n_improvements - published)
            value[0, 0] = error
            ks.publish(state, events, nodes, thresholds, values, control,
                       error, 0.0, feature, threshold, left, right, value, 3)
            published += 1
    return published


@pytest.fixture(autouse=True, scope="module")
def compiled():
    """Compile the kernel before any clock starts (JIT time is not solving time)."""
    stopped = Monitor()
    stopped.cancel()
    run(stopped, 1, 0.0)


def run(monitor, n, pause, max_events=4096):
    sink = ks.IncumbentSink(3, 2, max_events)
    trees = []
    count = monitor.run_kernel(
        _anytime_kernel, (monitor.control, *sink.buffers(), n, pause), sink,
        make_tree=lambda *arrays: trees.append(arrays) or arrays)
    return count, trees


def test_kernel_clock_is_python_monotonic():
    before = time.monotonic()
    inside = ks.monotonic()
    assert before <= inside <= time.monotonic()


def test_time_limit_stops_kernel_and_incumbents_arrive_in_order():
    monitor = Monitor(time_limit=0.5)
    start = time.monotonic()
    count, trees = run(monitor, 5, 0.02)
    took = time.monotonic() - start
    assert count == 5
    assert 0.5 <= took < 0.5 + 0.2
    assert monitor.stop_status() == Status.TIME_LIMIT
    assert [e for _, e, _ in monitor.incumbents] == [5.0, 4.0, 3.0, 2.0, 1.0]
    times = [t for t, _, _ in monitor.incumbents]
    assert times == sorted(times) and times[0] >= 0.02 and times[-1] < 0.5
    # the last tree drained is the last one published (error 1 stored in value[0, 0])
    assert trees[-1][4][0, 0] == 1.0 and monitor.best_error == 1.0


def test_cancel_from_another_thread_is_prompt():
    monitor = Monitor()
    timer = threading.Timer(0.3, monitor.cancel)
    start = time.monotonic()
    timer.start()
    run(monitor, 1, 0.0)
    assert time.monotonic() - start < 0.3 + 0.2
    assert monitor.final_status(proven=False) == Status.CANCELLED
    assert monitor.final_status(proven=True) == Status.OPTIMAL


def test_events_overflowing_the_buffer_keep_the_latest():
    monitor = Monitor(time_limit=0.3)
    run(monitor, 50, 0.0, max_events=8)
    errors = [e for _, e, _ in monitor.incumbents]
    assert errors[-1] == 1.0 and len(errors) >= 8
    assert errors == sorted(errors, reverse=True)


def _publish_tree(sink, control, error):
    """Publish a one-leaf tree whose leaf value is its error (so a drained tree says
    which event it came with)."""
    one = np.array([-1], dtype=np.int32)
    ks.publish(*sink.buffers(), control, error, 0.0, one, np.zeros(1), one, one,
               np.full((1, 2), error), 1)


def test_a_thread_moving_to_a_worse_task_keeps_its_undrained_better_tree():
    """A thread searching several tasks on one sink publishes 7 in one task, then 9 in
    the next, before the reader drains it; with another thread's 8 already shown, the
    7 is kept and must come with its own tree (the CI failure of 2026-11-27: the sink
    held only its latest tree, 9's, so the 7 was shown without one)."""
    streamed = []
    monitor = Monitor(on_incumbent=lambda tree, t, e, lb: streamed.append((tree, e)))
    sink = ks.IncumbentSink(1, 2)
    _publish_tree(sink, monitor.control, 7.0)
    _publish_tree(sink, monitor.control, 9.0)
    monitor._drain(sink, lambda *arrays: arrays[4][0, 0], best=[8.0])
    assert streamed == [(7.0, 7.0)] and monitor.best_error == 7.0
    _publish_tree(sink, monitor.control, 6.0)
    monitor._drain(sink, lambda *arrays: arrays[4][0, 0], best=[7.0])
    assert streamed[-1] == (6.0, 6.0)


def test_python_side_publish_and_callback():
    seen = []
    monitor = Monitor(on_incumbent=lambda tree, t, e, lb: seen.append((tree, e, lb)))
    monitor.publish("t1", 7, 2)
    monitor.publish("t2", 5, 3)
    assert seen == [("t1", 7.0, 2.0), ("t2", 5.0, 3.0)]
    assert monitor.best_tree == "t2" and not monitor.should_stop()
    monitor.cancel()
    assert monitor.should_stop() and monitor.stop_status() == Status.CANCELLED


def test_the_curve_never_goes_back_in_time():
    """Two threads' sinks are drained one after the other: the second's better tree
    may carry an earlier stamp than the first's last (seen with contree on two threads:
    3,928 errors at 31 ms, then 3,759 at 28 ms, a loop in the window's chart)."""
    seen = []
    monitor = Monitor(on_incumbent=lambda tree, t, e, lb: seen.append(t))
    monitor.publish("a", 9, 0, t=0.031)
    monitor.publish("b", 8, 0, t=0.028)
    monitor.publish("c", 7, 0, t=0.040)
    assert [t for t, _, _ in monitor.incumbents] == seen == [0.031, 0.031, 0.040]


def test_kernel_exception_is_reraised():
    def boom():
        raise RuntimeError("kernel failed")
    with pytest.raises(RuntimeError, match="kernel failed"):
        Monitor().run_kernel(boom, ())


def test_invalid_time_limit():
    with pytest.raises(ValueError):
        Monitor(time_limit=0)
