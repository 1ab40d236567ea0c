"""The engine never imports Qt or the GUI (so the CLI and sweeps run without a display)."""

import ast
import pkgutil
import subprocess
import sys
from pathlib import Path

from conftest import ROOT

import engine

FORBIDDEN = ("PySide6", "pyqtgraph", "shiboken6", "gui")


def engine_modules() -> list[str]:
    return [m.name for m in pkgutil.walk_packages(engine.__path__, "engine.")]


def test_no_engine_source_imports_qt_or_gui():
    offenders = []
    for path in (ROOT / "engine").rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text(), str(path))):
            names = []
            if isinstance(node, ast.Import):
                names = [a.name for a in node.names]
            elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
                names = [node.module]
            offenders += [f"{path.relative_to(ROOT)}: {n}" for n in names
                          if n.split(".")[0] in FORBIDDEN]
    assert not offenders, offenders


def test_importing_every_engine_module_loads_no_qt():
    modules = engine_modules()
    assert "engine.cli" in modules and "engine.solvers.greedy" in modules
    code = ("import sys\n" + "".join(f"import {m}\n" for m in modules) +
            f"bad = [m for m in sys.modules if m.split('.')[0] in {FORBIDDEN!r}]\n"
            "print(','.join(bad))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         cwd=ROOT, check=True)
    assert out.stdout.strip() == ""


def test_import_linter_contract_holds():
    lint_imports = Path(sys.executable).parent / "lint-imports"
    out = subprocess.run([str(lint_imports), "--no-cache"], capture_output=True,
                         text=True, cwd=ROOT)
    assert out.returncode == 0, out.stdout + out.stderr
    assert "2 kept, 0 broken" in out.stdout


def test_the_data_layer_never_imports_feature_building_or_the_solvers():
    """Issue 33: choosing features (which runs the greedy kernel) sits above reading
    tables and applying a recipe; the contract in pyproject.toml says so and holds."""
    import tomllib
    contracts = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"][
        "importlinter"]["contracts"]
    layered = [c for c in contracts if "engine.data" in c["source_modules"]]
    assert layered and {"engine.featurize", "engine.solvers"} <= set(
        layered[0]["forbidden_modules"])


def test_the_listed_packages_are_the_source_folders():
    """pyproject.toml lists its packages (for `import orchard`): none may be missed."""
    import tomllib
    listed = set(tomllib.loads((ROOT / "pyproject.toml").read_text())
                 ["tool"]["setuptools"]["packages"])
    folders = {".".join(path.parent.relative_to(ROOT).parts)
               for top in ("engine", "gui", "resources")
               for path in (ROOT / top).rglob("__init__.py")}
    assert listed == folders | {"orchard"}


def test_the_registry_names_each_solver_with_the_module_that_registers_it():
    """Families are imported on first use (`registry.FAMILIES`): a name listed with the
    wrong module, or a family registering a name the table lacks, would be missing
    from the window's picker or fail in `get_solver`."""
    from engine.solvers import registry
    code = ("import importlib\nfrom engine.solvers import registry\n"
            "for module in dict.fromkeys(registry.FAMILIES.values()):\n"
            "    before = set(registry._SOLVERS)\n"
            "    importlib.import_module(module)\n"
            "    print(module, sorted(set(registry._SOLVERS) - before))\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         cwd=ROOT, check=True).stdout
    registered = {}
    for line in out.splitlines():
        module, names = line.split(" ", 1)
        for name in ast.literal_eval(names):
            registered[name] = module
    assert registered == registry.FAMILIES
