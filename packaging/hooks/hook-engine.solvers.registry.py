"""The solver families `engine.solvers.registry` imports by name when one is first
asked for (`FAMILIES`): no import statement names them, so PyInstaller's analysis
would leave them out (the frozen app then knew no solver but the default's)."""

from engine.solvers.registry import FAMILIES

hiddenimports = sorted(set(FAMILIES.values()))
