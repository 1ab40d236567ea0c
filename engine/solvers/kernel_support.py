"""What numba kernels need to cooperate with a Monitor without holding the GIL.

Kernels receive the Monitor's `control` array and poll `should_stop(control)`; they
publish improving trees with `publish(sink, ...)` into an `IncumbentSink`'s
preallocated buffers, which the Python side drains while the kernel runs.  No Python
object is touched inside a kernel.

The clock is CPython's own monotonic clock, the function behind `time.monotonic()`,
called directly from kernels.  It is the one portable path: the C runtime has no
monotonic wall clock on every OS (`clock_gettime` does not exist on Windows, and on
macOS its CLOCK_MONOTONIC is not the clock Python's deadlines are set with), while
the interpreter exports this function on Linux, macOS and Windows alike and it reads
the clock without touching Python objects, so it is safe without the GIL.  The call
is an intrinsic naming the function, whose address is registered with LLVM when this
module is imported, so kernels using it can still be cached on disk.
"""

from __future__ import annotations

import ctypes
import time

import numpy as np
from llvmlite import binding as llvm
from llvmlite import ir
from numba import njit, types
from numba.core import cgutils
from numba.extending import intrinsic

# Stop codes in control[0] (0 = keep going).
STOP_CANCEL = 1.0
STOP_TIME = 2.0
STOP_MEMORY = 3.0
# Layout of the control array.
C_STOP, C_DEADLINE, C_START = 0, 1, 2
CONTROL_SIZE = 4

def _python_clock() -> tuple[str, bool]:
    """The name of CPython's monotonic clock function in this interpreter, and whether
    it returns the nanoseconds (3.11-3.12) or writes them through a pointer (3.13+),
    after registering its address with LLVM under that name."""
    for name, returns in (("PyTime_MonotonicRaw", False), ("_PyTime_GetMonotonicClock", True)):
        function = getattr(ctypes.pythonapi, name, None)
        if function is not None:
            llvm.add_symbol(name, ctypes.cast(function, ctypes.c_void_p).value)
            return name, returns
    raise ImportError("this Python exports no monotonic clock function for the solvers")


_CLOCK_NAME, _CLOCK_RETURNS = _python_clock()


@intrinsic
def _clock_monotonic(typingctx):
    def codegen(context, builder, signature, args):
        i64, f64 = ir.IntType(64), ir.DoubleType()
        if _CLOCK_RETURNS:      # _PyTime_t _PyTime_GetMonotonicClock(void)
            fnty = ir.FunctionType(i64, [])
            clock = cgutils.get_or_insert_function(builder.module, fnty, _CLOCK_NAME)
            nanoseconds = builder.call(clock, [])
        else:                   # int PyTime_MonotonicRaw(PyTime_t *result)
            fnty = ir.FunctionType(ir.IntType(32), [i64.as_pointer()])
            clock = cgutils.get_or_insert_function(builder.module, fnty, _CLOCK_NAME)
            result = cgutils.alloca_once(builder, i64)
            builder.call(clock, [result])
            nanoseconds = builder.load(result)
        return builder.fmul(builder.sitofp(nanoseconds, f64), ir.Constant(f64, 1e-9))
    return types.float64(), codegen


@njit(cache=True, nogil=True)
def monotonic():
    """Seconds on the monotonic clock, callable from kernels."""
    return _clock_monotonic()


@njit(cache=True, nogil=True)
def elapsed(control):
    return monotonic() - control[C_START]


@njit(cache=True, nogil=True)
def should_stop(control):
    """True once the run was cancelled or its deadline passed (then recorded)."""
    if control[C_STOP] != 0.0:
        return True
    if monotonic() >= control[C_DEADLINE]:
        control[C_STOP] = STOP_TIME
        return True
    return False


@njit(cache=True, nogil=True)
def partition_rows(xg, rows, a, b):
    """Put the rows of rows[a:b] with xg[row] = 0 first, in place; returns the first
    position of a row with xg[row] != 0 (the binary solvers' split of a branch)."""
    i0 = a
    i1 = b - 1
    while i0 <= i1:
        if xg[rows[i0]] == 0:
            i0 += 1
        else:
            t = rows[i0]
            rows[i0] = rows[i1]
            rows[i1] = t
            i1 -= 1
    return i0


@njit(cache=True, nogil=True)
def copy_prefix(dst, src, n):
    """dst[:n] = src[:n] for 1-D arrays (pass `.reshape(-1)` views of C-contiguous
    ones), as a loop: numba's array-to-array slice assignment carries a shape check
    whose formatted error message alone costs seconds of compilation on a cold cache."""
    for i in range(n):
        dst[i] = src[i]


# Sink layout: state = [sequence (odd while writing), events published, nodes in the
# tree, error of the tree] (float64: the error is one of them).
S_SEQ, S_EVENTS, S_NODES, S_TREE_ERROR = 0, 1, 2, 3


@njit(cache=True, nogil=True)
def publish(state, events, nodes, thresholds, values, control,
            error, lower_bound, feature, threshold, left, right, value, n_nodes):
    """Record an incumbent: its (time, error, lower bound), and its tree arrays if it
    is the sink's best tree so far.

    The sink keeps its best tree, not its latest: a thread that searches several
    tasks publishes each task's improving trees, so a later event can be worse than
    an earlier one that the reader has not drained yet (`Monitor._drain` then keeps
    the earlier event, whose tree must still be there).  The buffers are guarded by
    a sequence counter (a seqlock): it is odd while the kernel writes, so a reader
    that sees it change or odd copies again.
    """
    state[S_SEQ] += 1
    k = int(state[S_EVENTS]) % events.shape[0]
    events[k, 0] = elapsed(control)
    events[k, 1] = error
    events[k, 2] = lower_bound
    if error < state[S_TREE_ERROR]:
        m = min(n_nodes, nodes.shape[1])
        for i in range(m):
            nodes[0, i] = feature[i]
            nodes[1, i] = left[i]
            nodes[2, i] = right[i]
            thresholds[i] = threshold[i]
            for c in range(values.shape[1]):
                values[i, c] = value[i, c]
        state[S_NODES] = m
        state[S_TREE_ERROR] = error
    state[S_EVENTS] += 1
    state[S_SEQ] += 1


class IncumbentSink:
    """Preallocated buffers a kernel publishes into (see `publish`)."""

    def __init__(self, max_nodes: int, n_classes: int, max_events: int = 4096):
        self.state = np.array([0.0, 0.0, 0.0, np.inf])
        self.events = np.zeros((max_events, 3))
        self.nodes = np.full((3, max_nodes), -1, dtype=np.int32)
        self.thresholds = np.zeros(max_nodes)
        self.values = np.zeros((max_nodes, n_classes))
        self.drained = 0

    def buffers(self) -> tuple:
        """The arrays to pass to a kernel, in `publish`'s order."""
        return self.state, self.events, self.nodes, self.thresholds, self.values

    def drain(self) -> tuple[list[tuple[float, float, float]], tuple | None, float]:
        """New events since the last drain, and a consistent copy of the sink's best
        tree with its error (None and inf when no event is new).

        Events older than the buffer's length are lost if the kernel outpaced the
        reader; the best tree is always there.
        """
        while True:
            seq = int(self.state[S_SEQ])
            if seq % 2:
                time.sleep(0.0005)
                continue
            count = int(self.state[S_EVENTS])
            m = int(self.state[S_NODES])
            tree_error = float(self.state[S_TREE_ERROR])
            tree = (self.nodes[0, :m].copy(), self.thresholds[:m].copy(),
                    self.nodes[1, :m].copy(), self.nodes[2, :m].copy(),
                    self.values[:m].copy())
            if int(self.state[S_SEQ]) == seq:
                break
        first = max(self.drained, count - len(self.events))
        events = [tuple(self.events[i % len(self.events)]) for i in range(first, count)]
        fresh = count > self.drained
        self.drained = count
        return events, (tree if fresh else None), (tree_error if fresh else np.inf)


def kernel_array(X, dtype, progress, stage: str = "laying out the rows for the solver"):
    """`X` as a C-contiguous `dtype` array for a kernel, converted a block of rows at a
    time with `progress(stage, fraction)` between blocks, so that a stop is honoured
    while two million rows are copied (`Monitor.checkpoint` raises to stop)."""
    X = np.asarray(X)
    if X.dtype == dtype and X.flags.c_contiguous:
        return X
    out = np.empty(X.shape, dtype)
    step = max(1, (1 << 23) // max(X.shape[1] if X.ndim > 1 else 1, 1))
    for start in range(0, len(X), step):
        progress(stage, start / len(X))
        out[start:start + step] = X[start:start + step]
    return out


def compiled(*kernels) -> bool:
    """Whether calling these numba kernels compiles nothing: each is loaded in this
    process or numba's disk cache holds it (a signature saved from the current
    source).  A caller that must not spend a cold compile (tens of seconds that no
    Stop interrupts) on an optional step asks this first.  numba's cache index is
    read through private attributes; should they change, the answer is True."""
    for kernel in kernels:
        if kernel.signatures:
            continue
        try:
            if not kernel._cache._cache_file._load_index():
                return False
        except AttributeError:
            continue
    return True


# Work (rows x features ** (depth - 1), see `run`) below which a kernel runs in the
# calling thread: measured on the CP4IM sets, such searches take at most about 30 ms,
# less than a thread costs to start and to wake its waiter when the cores are busy
# (2-4 ms each), and short enough that nothing is missed meanwhile (the kernel polls
# its own deadline and stop code; its trees are published as it returns).
INLINE_WORK = 10_000_000


def run(monitor, kernel, args: tuple, sink: IncumbentSink | None = None,
        make_tree=None, work: float = float("inf")):
    """`monitor.run_kernel(kernel, args, sink, make_tree)`, or, for a search whose
    `work` (rows x features ** (depth - 1), a rough count of the cells a search of
    that depth reads) is below INLINE_WORK, the kernel called in this thread and its
    sink drained once it returns (the same trees, curve and result)."""
    if work >= INLINE_WORK:
        return monitor.run_kernel(kernel, args, sink, make_tree)
    value = kernel(*args)
    monitor.run_threads([], [sink] if sink is not None else [], make_tree)   # drains
    return value


def search_work(rows: int, features: int, depth: int) -> float:
    """`run`'s measure of a search's work: rows x features ** (depth - 1)."""
    return float(rows) * float(features) ** max(depth - 1, 0)
