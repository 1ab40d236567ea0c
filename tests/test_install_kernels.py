"""`pip install` compiles the solvers' kernels (packaging/install_kernels.py, wired in
pyproject.toml's `[tool.setuptools.cmdclass]`), so the first fit after it compiles
nothing: the hook is loaded the way setuptools loads it, and the last test runs its
compile over a kernel cache filled from scratch and then fits every way a user can,
counting numba's compiles."""

import ast
import importlib.metadata
import importlib.util
import json
import re
import subprocess
import sys
import tomllib

import pytest
from setuptools.command.build_py import build_py
from setuptools.dist import Distribution

from big_tables import transport_log
from conftest import ROOT
from test_portable_kernels import check_portable, compile_from_scratch


def load_hook():
    """The command class pyproject.toml names, loaded from its file as setuptools does."""
    dotted = tomllib.loads((ROOT / "pyproject.toml").read_text())[
        "tool"]["setuptools"]["cmdclass"]["build_py"]
    module_name, _, class_name = dotted.rpartition(".")
    spec = importlib.util.spec_from_file_location(
        "install_kernels_under_test", ROOT / (module_name.replace(".", "/") + ".py"))
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module, getattr(module, class_name)


def test_the_build_step_compiles_where_the_install_reads(monkeypatch, tmp_path):
    module, command_class = load_hook()
    assert issubclass(command_class, build_py)
    built, roots = [], []
    monkeypatch.setattr(build_py, "run", lambda self: built.append(True))
    monkeypatch.setattr(module, "compile_kernels", roots.append)
    command = command_class(Distribution())
    command.build_lib = str(tmp_path)
    command.editable_mode = False   # a wheel: the copy it is built from
    command.run()
    command.editable_mode = True    # `pip install -e`: the sources themselves
    command.run()
    assert built == [True, True]
    assert roots == [str(tmp_path), str(ROOT)]


def test_a_failed_compile_never_fails_the_install(capsys):
    module, _ = load_hook()
    calls = []

    def failing(argv, **kwargs):
        calls.append((argv, kwargs))
        return subprocess.CompletedProcess(argv, 1)

    def missing(argv, **kwargs):
        raise OSError("no such interpreter")

    assert module.compile_kernels("/some/root", run=failing) is False
    assert module.compile_kernels("/some/root", run=missing) is False
    (argv, kwargs), = calls
    assert argv[1:] == ["-m", "engine.warmup", "--install"]
    assert kwargs["cwd"] == "/some/root"
    assert kwargs["env"]["PYTHONPATH"].split(":")[0] == "/some/root"
    said = capsys.readouterr().out
    assert "compiling the kernels failed" in said and "no such interpreter" in said


LOADED = """
import json, sys
from engine.warmup import warm_up
report = warm_up()
assert not report.errors, report.errors
print(json.dumps([m.__file__ for name, m in sys.modules.items()
                  if name.split(".")[0] == "engine" and getattr(m, "__file__", None)]))
"""


def imported_distributions(paths: list[str]) -> set[str]:
    """The distributions whose modules the files `paths` import (anywhere in them),
    leaving out the standard library and Orchard's own `engine`."""
    names = set()
    for path in paths:
        for node in ast.walk(ast.parse(open(path, encoding="utf-8").read())):
            if isinstance(node, ast.Import):
                names |= {alias.name.split(".")[0] for alias in node.names}
            elif isinstance(node, ast.ImportFrom) and node.level == 0:
                names.add(node.module.split(".")[0])
    names -= set(sys.stdlib_module_names) | {"engine"}
    owners = importlib.metadata.packages_distributions()
    return {canonical(d) for name in names for d in owners.get(name, [name])}


def requirements(distribution: str) -> list[str]:
    try:
        return importlib.metadata.requires(distribution) or []
    except importlib.metadata.PackageNotFoundError:   # e.g. wheel, in no test venv
        return []


def canonical(requirement: str) -> str:
    return re.split(r"[<>=!~\[; ]", requirement, maxsplit=1)[0].lower().replace("_", "-")


def test_the_build_environment_holds_what_the_warm_up_imports():
    """pip runs the build step's compile in an isolated environment holding only
    `[build-system] requires`: a module the warm-up imports that is missing there
    makes the compile fail, silently (pyarrow did: every kernel then compiled at the
    first run, and in every test worker)."""
    done = subprocess.run([sys.executable, "-c", LOADED], cwd=ROOT, capture_output=True,
                          text=True, timeout=600, check=False)
    assert done.returncode == 0, done.stderr[-3000:]
    needed = imported_distributions(json.loads(done.stdout.splitlines()[-1]))
    listed = {canonical(r) for r in tomllib.loads((ROOT / "pyproject.toml").read_text())[
        "build-system"]["requires"]}
    # ... and what those bring with them (numba brings llvmlite)
    brought = {canonical(r) for d in listed for r in requirements(d) if "extra ==" not in r}
    assert "pandas" in needed and "numba" in needed   # the scan sees the imports
    assert needed <= listed | brought, needed - listed - brought


FITS = """
import sys
import numpy as np
import pandas as pd
from engine.warmup import count_compiles
counter = count_compiles()
from engine import cli
from orchard import OptimalTreeClassifier
table, out = sys.argv[1], sys.argv[2]
for algo in ("auto", "blossom", "contree", "dl85", "greedy"):
    assert cli.main(["fit", table, "--algo", algo, "--depth", "3", "--time-limit", "60",
                     "--out", out]) == 0
frame = pd.read_csv(table)
y = frame.pop("delayed").fillna("no")
OptimalTreeClassifier(max_depth=3).fit(frame, y)
numbers = frame.select_dtypes("number").fillna(0)
OptimalTreeClassifier(max_depth=3).fit(numbers.to_numpy(), y)
OptimalTreeClassifier(max_depth=3).fit(numbers, y)
print(counter.count)
"""


@pytest.mark.slow
def test_kernels_from_scratch_are_portable_and_after_the_install_step_fits_compile_nothing(
        tmp_path, monkeypatch):
    """With an empty cache, every kernel compiled from scratch declares only portable
    functions (test_portable_kernels); then the build step's compile over that cache
    (which runs the same warm-up, compiling what is missing) succeeds, and fits from
    the command line (every solver with kernels) and the notebook (a frame with text
    columns and missing cells, a numeric frame, an array) in a fresh process compile
    nothing.  (One compile from scratch serves both: two minutes of a core each.)"""
    cache = tmp_path / "cache"
    check_portable(compile_from_scratch(cache))
    monkeypatch.setenv("NUMBA_CACHE_DIR", str(cache))
    module, _ = load_hook()
    assert module.compile_kernels(str(ROOT)) is True
    table = transport_log(tmp_path / "log.csv", 300)
    done = subprocess.run([sys.executable, "-c", FITS, str(table), str(tmp_path / "t.json")],
                          cwd=ROOT, capture_output=True, text=True, timeout=900,
                          check=False)
    assert done.returncode == 0, done.stderr
    assert int(done.stdout.split()[-1]) == 0, done.stdout
    assert json.loads((tmp_path / "t.json").read_text())   # greedy's model, saved
