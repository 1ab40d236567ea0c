"""JIT warm-up: every registered solver trains once on the tiny table, nothing is fatal."""

import subprocess
import sys

import pytest
from conftest import ROOT

from engine.errors import DataError
from engine.solvers import registry, solver_names
from engine.solvers.protocol import Solver
from engine.warmup import TINY_TABLE, tiny_dataset, warm_up


def test_tiny_dataset_prepares_both_ways():
    assert tiny_dataset().n_rows == TINY_TABLE.count("\n") - 1
    continuous = tiny_dataset("none")
    binary = tiny_dataset("quantile:4")
    assert not continuous.is_binary and binary.is_binary
    assert continuous.n_classes == 2


def test_every_registered_solver_is_warmed():
    seen = []
    report = warm_up(on_solver=lambda name, seconds: seen.append((name, seconds)))
    assert report.errors == {}
    assert set(report.timings) == set(solver_names()) == {name for name, _ in seen}
    assert all(seconds >= 0 for seconds in report.timings.values())
    assert report.total == pytest.approx(sum(report.timings.values()))
    assert not report.stopped


def test_should_stop_is_checked_between_solvers():
    report = warm_up(should_stop=lambda: True)
    assert report.stopped and report.timings == {}


class Broken(Solver):
    name = "broken-for-test"
    title = "Broken"
    summary = "Always fails."

    def solve(self, data, params, monitor):
        raise DataError("this solver always fails")


def test_a_failing_solver_is_reported_not_raised(monkeypatch):
    monkeypatch.setitem(registry._SOLVERS, Broken.name, Broken)
    report = warm_up(["greedy", Broken.name])
    assert "greedy" in report.timings
    assert "always fails" in report.errors[Broken.name]
    assert Broken.name not in report.timings


def test_kernels_are_compiled_after_warm_up_in_a_fresh_process():
    """Before warm-up no kernel has a compiled signature; afterwards each solver's has."""
    code = (
        "import importlib, pkgutil, sys\n"
        "import engine.solvers as s\n"
        "from numba.core.registry import CPUDispatcher\n"
        "kernels = [importlib.import_module(m.name) for m in pkgutil.walk_packages(s.__path__, 'engine.solvers.')\n"
        "           if m.name.endswith('.kernel')]\n"
        "assert len(kernels) >= 4, kernels\n"
        "def compiled(mod):\n"
        "    return sum(len(v.signatures) for v in vars(mod).values() if isinstance(v, CPUDispatcher))\n"
        "before = {k.__name__: compiled(k) for k in kernels}\n"
        "from engine.warmup import warm_up\n"
        "report = warm_up()\n"
        "after = {k.__name__: compiled(k) for k in kernels}\n"
        "print(before); print(after); print(report.errors)\n"
        "assert not report.errors, report.errors\n"
        "assert all(v == 0 for v in before.values()), before\n"
        "assert all(v > 0 for v in after.values()), after\n")
    done = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, check=False,
                          text=True, timeout=600)
    assert done.returncode == 0, done.stdout + done.stderr


def test_compiled_tells_a_kernel_that_would_compile_from_one_that_would_not(tmp_path):
    """A cached kernel is compiled once its first call has run, and still counts as
    compiled in a process that has not called it (numba's disk cache holds it)."""
    import importlib.util

    from engine.solvers.kernel_support import compiled

    source = tmp_path / "fresh_kernel.py"
    source.write_text("from numba import njit\n\n\n@njit(cache=True)\n"
                      "def twice(x):\n    return 2 * x\n")

    def load():
        spec = importlib.util.spec_from_file_location("fresh_kernel", source)
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
        return module.twice

    kernel = load()
    assert not compiled(kernel)
    assert kernel(3) == 6
    assert compiled(kernel)
    assert compiled(load())   # a new dispatcher: only the disk cache knows it
