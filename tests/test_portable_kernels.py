"""The numba kernels call nothing that exists on one operating system only.

A kernel is machine code that calls external functions by name; a name the OS does
not have (`clock_gettime` on Windows, say) only fails when the app runs there.  So
every kernel the solvers use is compiled from scratch and the functions its LLVM IR
declares are checked against what every platform provides: LLVM's intrinsics,
numba's runtime and helpers, the Python C API and the C maths library (the compile
is shared with tests/test_install_kernels.py, whose fits then use its cache: the
compile from scratch is two minutes of one core).  A static scan adds the kernels
no warm-up compiles: only kernel_support may declare an external function.
"""

from __future__ import annotations

import ast
import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]

# What numba, LLVM and CPython provide on Linux, macOS and Windows alike.
PORTABLE_PREFIXES = ("llvm.", "NRT_", "numba_", "Py", "_Py")
C_MATHS = {"log", "log2", "log10", "log1p", "exp", "exp2", "expm1", "pow", "sqrt",
           "fmod", "floor", "ceil", "round", "trunc", "fabs", "sin", "cos", "tan",
           "atan", "atan2", "hypot", "tanh", "lgamma", "tgamma", "erf", "erfc"}

# Compiles every solver's kernels into an empty cache, then lists the external
# functions each compiled kernel of the engine declares.
DECLARED = r"""
import json, re, sys
from numba.core.registry import CPUDispatcher
from engine.warmup import warm_up
report = warm_up()
assert not report.errors, report.errors
declared = {}
for module_name, module in list(sys.modules.items()):
    if not module_name.startswith("engine"):
        continue
    for name, obj in vars(module).items():
        if isinstance(obj, CPUDispatcher) and obj.__module__ == module_name:
            for sig in obj.signatures:
                for symbol in re.findall(r'^declare [^@]*@"?([^"(]+)', obj.inspect_llvm(sig), re.MULTILINE):
                    declared.setdefault(symbol, set()).add(f"{module_name}.{name}")
print(json.dumps({symbol: sorted(users) for symbol, users in declared.items()}))
"""


def portable(symbol: str) -> bool:
    return symbol.startswith(PORTABLE_PREFIXES) or symbol in C_MATHS


def compile_from_scratch(cache) -> dict[str, list[str]]:
    """Every solver's kernels compiled into the empty kernel cache `cache` (in a
    process of their own); returns the external functions they declare, and who does.
    The cache is then full: tests/test_install_kernels.py fits over it."""
    env = {**os.environ, "NUMBA_CACHE_DIR": str(cache)}
    done = subprocess.run([sys.executable, "-c", DECLARED], cwd=ROOT, env=env,
                          capture_output=True, text=True, timeout=600, check=False)
    assert done.returncode == 0, done.stderr[-3000:]
    return json.loads(done.stdout.splitlines()[-1])


def check_portable(declared: dict[str, list[str]]) -> None:
    assert any(symbol.startswith("NRT_") for symbol in declared)  # the scan sees calls
    assert any("Monotonic" in symbol for symbol in declared)      # ... and the clock
    foreign = {symbol: users for symbol, users in declared.items() if not portable(symbol)}
    assert not foreign, f"kernels call OS-specific functions: {foreign}"


def test_an_os_specific_call_is_caught():
    check_portable({"NRT_MemInfo_alloc": ["k"], "numba_Monotonic": ["k"], "log": ["k"]})
    with pytest.raises(AssertionError, match="clock_gettime"):
        check_portable({"NRT_MemInfo_alloc": ["k"], "numba_Monotonic": ["k"],
                        "clock_gettime": ["engine.solvers.kernel_support.now"]})


def test_only_kernel_support_declares_external_functions():
    """Ways a kernel can reach a C function by name, outside the one clock."""
    markers = ("get_or_insert_function", "ExternalFunction", "ctypes", "cffi",
               "add_symbol", "intrinsic")
    allowed = ROOT / "engine" / "solvers" / "kernel_support.py"
    offenders = []
    for path in sorted((ROOT / "engine").rglob("*.py")):
        names = {node.id if isinstance(node, ast.Name) else node.attr
                 for node in ast.walk(ast.parse(path.read_text(encoding="utf-8")))
                 if isinstance(node, (ast.Name, ast.Attribute))}
        names |= set(re.findall(r"^\s*(?:import|from) (\w+)",
                                path.read_text(encoding="utf-8"), re.MULTILINE))
        used = sorted(names & set(markers))
        if used and path != allowed:
            offenders.append(f"{path.relative_to(ROOT)}: {used}")
    assert not offenders, offenders
