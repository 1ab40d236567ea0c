"""Solvers by their stable names (the CLI's `--algo`, the GUI's picker).

A solver's family is imported the first time it is asked for: importing all of them
(HiGHS, the SAT solvers, every family's numba kernels) cost a small `orchard fit`
a quarter of a second it did not need (issue 49).
"""

from __future__ import annotations

import importlib

from engine.errors import ParameterError
from engine.solvers.protocol import Solver
from engine.vocabulary import CLASSIFICATION

# Each solver's name and the module that registers it, in the window's order.
FAMILIES = {"greedy": "engine.solvers.greedy", "auto": "engine.solvers.auto",
            "blossom": "engine.solvers.blossom", "contree": "engine.solvers.contree",
            "dl85": "engine.solvers.dl85", "cadl85": "engine.solvers.dl85",
            "hybrid": "engine.solvers.hybrid", "sat-depth": "engine.solvers.sat",
            "sat-size": "engine.solvers.sat", "odd": "engine.solvers.odd"}

_SOLVERS: dict[str, type[Solver]] = {}


def register(cls: type[Solver]) -> type[Solver]:
    """Class decorator: make a solver available under `cls.name`."""
    _SOLVERS[cls.name] = cls
    return cls


def get_solver(name: str) -> type[Solver]:
    if name not in _SOLVERS and name in FAMILIES:
        importlib.import_module(FAMILIES[name])   # registers it
    try:
        return _SOLVERS[name]
    except KeyError:
        raise ParameterError(f"Unknown algorithm '{name}' (available: "
                             f"{', '.join(solver_names())}).") from None


def solver_names() -> list[str]:
    return list(dict.fromkeys([*FAMILIES, *_SOLVERS]))


def default_solver_name(task: str = CLASSIFICATION) -> str:
    """The contract's default (DESIGN.md); for a regression, which Blossom does not
    grow, `auto` (an exact search of least squared error, which it names)."""
    return "blossom" if task == CLASSIFICATION else "auto"


def solvers_for(task: str) -> list[str]:
    """The names of the solvers whose trees can predict for `task` (imports them all)."""
    return [name for name in FAMILIES if task in get_solver(name).tasks]
